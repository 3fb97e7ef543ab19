"""Adapters that plug a certified dpdro noise into other differential-privacy libraries.

Each adapter is its own module and imports its library only there (an optional extra of dpdro):
``dpdro.integrations.opendp`` (a measurement built with ``make_user_measurement``, with ``make_``,
``then_`` and Context-API routes; extra ``opendp``) and ``dpdro.integrations.diffprivlib`` (a
:class:`diffprivlib.mechanisms.base.DPMechanism`; extra ``diffprivlib``). Both re-certify the noise
and release through the exact secure sampler. From a checkout: ``pip install ".[opendp]"``,
``pip install ".[diffprivlib]"``, or ``pip install ".[integrations]"`` for both and dp_accounting.
"""
