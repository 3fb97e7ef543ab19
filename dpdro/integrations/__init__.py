"""Adapters that plug a certified dpdro noise into other differential-privacy libraries.

Each adapter is its own module and imports its library only there (an optional extra):
``diffprivlib`` (a :class:`diffprivlib.mechanisms.base.DPMechanism`) and ``opendp`` (a measurement
built with ``make_user_measurement``). Both re-certify the noise and release through the exact
secure sampler. Install the libraries with ``pip install dpdro[integrations]``.
"""
