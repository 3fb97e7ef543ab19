r"""A diffprivlib mechanism that adds a certified dpdro noise, sampled exactly and securely.

diffprivlib (IBM) offers the Laplace family, truncated Laplace, Gaussian variants and a pure-DP
staircase; :class:`CertifiedNoise` adds any certified :class:`dpdro.PiecewiseUniform` (for
example the optimal (ε, δ) noise of :func:`dpdro.optimal_noise`) as one more
:class:`diffprivlib.mechanisms.base.DPMechanism`, usable wherever diffprivlib code calls
``randomise``, and accountable with diffprivlib's :class:`~diffprivlib.accountant.BudgetAccountant`.

Install diffprivlib with the ``diffprivlib`` extra of dpdro (``pip install ".[diffprivlib]"`` in a
checkout); diffprivlib 0.6.6 needs scikit-learn below 1.9, which that extra pins.
"""

from __future__ import annotations

import random
import secrets

from diffprivlib.mechanisms.base import DPMechanism

from .._validation import check_finite, check_open_unit, check_positive
from ..sampling import SecureSampler

__all__ = ["CertifiedNoise"]


class CertifiedNoise(DPMechanism):
    r"""Add a certified piecewise-uniform noise: the release is R_h(value + X) (exact randomized
    rounding).

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    delta : float
        Privacy parameter δ in (0, 1). The noise is re-certified on construction:
        ``dpdro.certify_delta(noise, epsilon, sensitivity) <= delta`` or a ``ValueError``.
    sensitivity : float
        Sensitivity Δf > 0 of the query the mechanism is applied to.
    noise : dpdro.PiecewiseUniform
        The noise X (e.g. ``dpdro.optimal_noise(problem).noise``).
    resolution : float, optional
        Output lattice step h (a power of two); see :class:`dpdro.sampling.SecureSampler`.
    random_state : None, int or numpy.random.RandomState, optional
        diffprivlib's convention. ``None`` (default): the secure :class:`secrets.SystemRandom`, and
        the release is exact (:class:`~dpdro.sampling.SecureSampler`, Theorems 1 and 2). An int or a
        ``RandomState``: a :class:`random.Random` seeded from it, for reproducible draws, **not for
        deployment**.

    Attributes
    ----------
    certified_delta : float
        The certified δ of every release (≤ ``delta``).

    Notes
    -----
    ``bias(value)`` = E X and ``variance(value)`` = Var X + h²E[θ(1 − θ)] are exact moments of the
    released value (randomized rounding is unbiased and adds at most h²/4 of variance); ``mse`` is
    diffprivlib's variance + bias².

    References
    ----------
    .. [1] N. Holohan, S. Braghin, P. Mac Aonghusa and K. Levacher, "Diffprivlib: the IBM
       differential privacy library", arXiv:1907.02444, 2019.
    .. [2] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization".
    """

    def __init__(self, *, epsilon, delta, sensitivity, noise, resolution=None, random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, random_state=random_state)
        self.sensitivity = self._check_sensitivity(sensitivity)
        self.noise = noise
        self.resolution = resolution
        rng = (
            self._rng
            if isinstance(self._rng, secrets.SystemRandom)
            else random.Random(int.from_bytes(self._rng.bytes(32), "big"))
        )
        self._sampler = SecureSampler(
            noise,
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
            resolution=resolution,
            rng=rng,
        )
        self.certified_delta = self._sampler.certified_delta

    @classmethod
    def from_noise(cls, noise, *, resolution=None, random_state=None) -> CertifiedNoise:
        """The mechanism of a noise that records ε, δ and Δf in its ``metadata`` (as dpdro's
        designs, catalog lookups and composition plans do); they are certified again on
        construction."""
        recorded = SecureSampler.from_noise(noise)
        return cls(
            epsilon=recorded.epsilon,
            delta=recorded.delta,
            sensitivity=recorded.sensitivity,
            noise=noise,
            resolution=resolution,
            random_state=random_state,
        )

    @classmethod
    def _check_epsilon_delta(cls, epsilon, delta):
        return check_positive("epsilon", epsilon), check_open_unit("delta", delta)

    @classmethod
    def _check_sensitivity(cls, sensitivity):
        return check_positive("sensitivity", sensitivity)

    def _check_all(self, value):
        super()._check_all(value)
        self._check_sensitivity(self.sensitivity)
        check_finite("value", value)
        return True

    def bias(self, value):
        """E[release] − value = E X, the same for every value (randomized rounding is unbiased)."""
        self._check_all(value)
        return self._sampler.release_mean(0)

    def variance(self, value):
        """Var[release] = Var X + h²·E[θ(1 − θ)] (see ``SecureSampler.release_variance``)."""
        self._check_all(value)
        return self._sampler.release_variance(value)

    def randomise(self, value):
        """One release R_h(value + X), (ε, ``certified_delta``)-DP at the stated sensitivity.

        Parameters
        ----------
        value : float or int
            The query answer.

        Returns
        -------
        float
            The randomised value, a multiple of the resolution.
        """
        self._check_all(value)
        return self._sampler.release(value)
