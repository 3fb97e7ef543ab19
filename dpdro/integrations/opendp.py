r"""An OpenDP measurement that adds a certified dpdro noise, sampled exactly and securely.

OpenDP (0.16) adds Laplace, Gaussian, their discrete versions and Tulap (``make_canonical_noise``)
to a scalar; :func:`make_certified_noise` adds any certified :class:`dpdro.PiecewiseUniform`, as a
measurement from a scalar domain under the absolute distance to approximate DP. It is used the three
ways OpenDP's own measurements are:

* **make_**: ``pre >> make_certified_noise(pre.output_domain, pre.output_metric, noise)``;
* **then_**: ``pre >> then_certified_noise(noise)`` (:func:`then_certified_noise`, a partial
  constructor: the domain and metric come from ``pre``, e.g. ``make_clamp >> then_sum``);
* **Context API**: ``dp.register(make_certified_noise)`` once, then
  ``context.query().clamp((0, 1)).sum().certified_noise(noise).release()``; the context's compositor
  charges each release the measurement's privacy map.

ε, δ and Δf default to those the noise records in its ``metadata`` (the noises of
:func:`dpdro.optimal_noise`, :func:`dpdro.catalog.lookup` and
:func:`dpdro.composition.design_for_releases` do); they are never trusted: the noise is certified at
them when the measurement is built.

OpenDP's rule for user code: :func:`opendp.measurements.make_user_measurement` needs the features
``"contrib"`` and ``"honest-but-curious"`` (``dp.enable_features("contrib",
"honest-but-curious")``), because OpenDP cannot verify the privacy claim of Python callbacks;
enabling it is the user's acknowledgement that the claim comes from outside OpenDP. Here the claim
is dpdro's certificate: the privacy map sends an input distance d_in to

    (ε, certify_delta(noise, ε, max(d_in, Δf))),

valid because the certified δ of a sensitivity s is the maximum of δ(φ) over |φ| ≤ s, which does
not decrease in s; for d_in ≤ Δf it is the certificate computed once at construction, for larger
d_in (e.g. the rounding slack of OpenDP's floating-point sums) the noise is certified again at
d_in. The function releases R_h(x + X) with :class:`~dpdro.sampling.SecureSampler`, whose law is
the certified one post-processed (Theorems 1 and 2 there), so the map holds for what executes.

Install OpenDP with the ``opendp`` extra of dpdro (``pip install ".[opendp]"`` in a checkout).

References
----------
.. [1] OpenDP, ``opendp.measurements.make_user_measurement`` (features ``contrib``,
   ``honest-but-curious``), ``opendp.measures.approximate``, ``opendp.context.register`` (the
   Context API's plugins).
.. [2] M. Gaboardi, M. Hay and S. Vadhan, "A programming framework for OpenDP", 2020.
"""

from __future__ import annotations

import functools

import opendp.prelude as dp

from .._validation import check_nonnegative
from ..privacy import certify_delta
from ..sampling import SecureSampler

__all__ = ["make_certified_noise", "then_certified_noise"]

_CARRIERS = {"f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize"}


def _check_space(input_domain, input_metric) -> None:
    domain_type, metric_type = (
        getattr(input_domain, "type", None),
        getattr(input_metric, "type", None),
    )
    carrier = str(getattr(input_domain, "carrier_type", ""))
    if not (str(domain_type).startswith("AtomDomain<") and carrier in _CARRIERS):
        raise ValueError(
            "input_domain must be a scalar opendp atom_domain of a numeric type, "
            f"got {input_domain!r}"
        )
    if carrier.startswith("f") and input_domain.nan:
        raise ValueError(
            f"input_domain must exclude NaN (atom_domain(T=float, nan=False)), got {input_domain!r}"
        )
    if not str(metric_type).startswith("AbsoluteDistance<"):
        raise ValueError(f"input_metric must be an opendp absolute_distance, got {input_metric!r}")


def make_certified_noise(
    input_domain,
    input_metric,
    noise,
    *,
    epsilon=None,
    delta=None,
    sensitivity=None,
    resolution=None,
    rng=None,
) -> dp.Measurement:
    r"""An OpenDP measurement x ↦ R_h(x + X) with the privacy map of dpdro's certificate.

    Parameters
    ----------
    input_domain : opendp Domain
        A scalar ``atom_domain`` of a numeric type (floats without NaN), e.g. the output domain of
        ``then_sum``.
    input_metric : opendp Metric
        ``absolute_distance`` (of the same type).
    noise : dpdro.PiecewiseUniform
        The noise X.
    epsilon, delta, sensitivity : float, optional
        The design guarantee (default: the ones ``noise.metadata`` records). The noise is
        re-certified and a ``ValueError`` raised unless ``certify_delta(noise, epsilon, sensitivity)
        <= delta``.
    resolution : float, optional
        Output lattice step h (a power of two); see :class:`~dpdro.sampling.SecureSampler`.
    rng : None or int, optional
        ``None`` (default): secure randomness. An int seed: reproducible draws, **not for
        deployment**.

    Returns
    -------
    opendp.mod.Measurement
        Output measure ``approximate(max_divergence())``; ``meas.map(d_in)`` is
        (ε, certify_delta(noise, ε, max(d_in, Δf))), capped at δ = 1.
    """
    _check_space(input_domain, input_metric)
    given = {"epsilon": epsilon, "delta": delta, "sensitivity": sensitivity}
    if any(v is None for v in given.values()):
        recorded = SecureSampler.from_noise(noise)  # raises unless the metadata records all three
        given = {k: getattr(recorded, k) if v is None else v for k, v in given.items()}
    sampler = SecureSampler(noise, **given, resolution=resolution, rng=rng)

    @functools.lru_cache(maxsize=64)
    def delta_at(d_in: float) -> float:
        if d_in <= sampler.sensitivity:
            return sampler.certified_delta
        return min(1.0, certify_delta(noise, sampler.epsilon, d_in))

    def privacy_map(d_in):
        return (sampler.epsilon, delta_at(check_nonnegative("d_in", d_in)))

    return dp.m.make_user_measurement(
        input_domain,
        input_metric,
        dp.approximate(dp.max_divergence()),
        function=sampler.release,
        privacy_map=privacy_map,
        TO=float,
    )


def then_certified_noise(noise, **kwargs):
    """Partial constructor of :func:`make_certified_noise`: ``pre >> then_certified_noise(noise)``
    takes the input domain and metric from ``pre`` (OpenDP's ``then_*`` convention); ``kwargs`` as
    there."""
    return dp._PartialConstructor(
        lambda input_domain, input_metric: make_certified_noise(
            input_domain, input_metric, noise, **kwargs
        )
    )
