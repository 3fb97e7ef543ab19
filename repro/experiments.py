r"""Machine-learning experiments of Sections 5.2 and 5.3: DP naïve Bayes and DP proximal coordinate descent.

Selvi, Liu and Wiesemann compare their optimised noise with the Gaussian, analytic Gaussian and
truncated Laplace mechanisms inside two learning algorithms, on UCI datasets (Tables 2 and 3):

* **naïve Bayes** (Section 5.2, Table 2): the class counts n_{y=c}, the class-conditional level counts
  n_{x_v=χ ∧ y=c} (sensitivity 1) and the class-conditional means μ_{x_v|y=c} and standard deviations
  σ_{x_v|y=c} of the numerical features (sensitivities (u_v − l_v)/n_{y=c} and (u_v − l_v)/√n_{y=c})
  are perturbed one by one, and the perturbed statistics classify (post-processing);
* **proximal coordinate descent** (Section 5.3, Table 3) for ℓ1-regularised logistic regression: every
  coordinate update perturbs the gradient sum Σ_i σ(−y_i h^⊤x_i)(−y_i x_il) ∈ (−n, n), sensitivity 2.

Every perturbed statistic gets (ε, δ) = (1, 0.1) on its own, as in the paper (and the authors' code):
the classifier as a whole is *not* (1, 0.1)-DP — the paper does not account for composition across
statistics or coordinate updates, and neither do we (this module reproduces the experiment).

Mechanisms are pluggable samplers
---------------------------------
A mechanism is any callable ``mech(values, sensitivity, rng) -> noisy values`` (arrays broadcast;
``rng`` a :class:`numpy.random.Generator`). :class:`AdditiveNoise` wraps a unit-sensitivity noise with a
``ppf`` (``dpdro.mechanisms.Gaussian/AnalyticGaussian/TruncatedLaplace`` or the ``PiecewiseUniform``
returned by :func:`dpdro.optimal_noise`) and adds ``sensitivity · ppf(U)``. Scaling a unit noise by Δf is
exact for all four: the Gaussian and truncated Laplace calibrations are linear in Δf, and for the
positively homogeneous ℓ1 loss, X is optimal for Δf = 1 iff Δf·X is optimal for Δf (a change of
variables in the DRO problem). A data-dependent mechanism (the paper's "(OPT)" column,
:class:`DataDependentNoise`, built by :func:`make_data_dependent`) plugs in the same way: it receives the
true values and chooses its noise from them; it declares ``needs_range = True`` and then also receives
the range Φ of each statistic (``phi_lo``, ``phi_hi``). Its construction is documented in the section
"(OPT)" below.

Common random numbers: all mechanisms of one simulation draw their uniforms from identically seeded
generators (and the coordinate descent shares its initial points and coordinate orders), so paired
differences between mechanisms have little simulation noise. Simulations are vectorised with numpy:
a block of simulations is one array operation; the only Python loops run over splits, over blocks of
simulations (memory) and over the T·K sequential coordinate updates. Each coordinate update of the
descent is one fused pass over the margins, compiled with numba (:mod:`repro.pcd_kernels`; a numpy
fallback without it), in float32 by default: :func:`pcd_train` states why that is safe, and
``dtype=np.float64`` reproduces the straightforward implementation (:func:`repro.brute.pcd_train_reference`).

Sampling uses :class:`numpy.random.Generator`; a real release needs a secure source (e.g. seeding from
``secrets``) and care with floating-point attacks.

Choices (see the notebooks ``31_naive_bayes`` and ``32_coordinate_descent`` for their effect)
-------------------------------------------------------------------------------------------
The paper is followed where it is explicit; the authors' public Julia code (selvi-aras/DP-via-DRO,
``ML Algorithms Julia/``) differs in places, available through ``NBSettings.authors()``:

* sensitivities: the paper's (u_v − l_v)/n_{y=c} and (u_v − l_v)/√n_{y=c} with the training set's class
  counts; the authors round them **up to the next integer** (``ceil``) and use the full dataset's class
  counts (their comment: "we actually need widths(df_cont_train, prior_counts)");
* noisy standard deviations must be positive: the paper does not say how; the authors floor them (and
  the non-private ones) at **1** in the feature's units; by default we floor at 1% of the feature range;
* every level count is perturbed, zeros included (the set of levels is public); the authors perturb
  only the levels seen in the training set (skipping zeros reveals them), and score unseen levels as
  probability 0. Noisy counts are floored at 1e-6 as in the authors' code;
* bounds l_v, u_v: the smallest and largest value of the column in the full dataset (the appendix);
* coordinate descent: unit step, random initial point in [−1, 1]^d, K coordinates drawn without
  replacement per iteration, h^t the average of the K inner iterates, error of the last iterate h^T
  (as the authors' ``PCD_train`` / ``summarize_last_iterate``); features from
  :func:`repro.datasets.one_hot` (the authors' centring and scaling on the full dataset).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
from scipy import sparse, stats

from dpdro import Partition, PiecewiseLinear, PiecewiseUniform, Problem, certify_delta, optimal_noise
from dpdro import data_dependent as dd
from dpdro._validation import check_positive, check_real
from dpdro.mechanisms import AnalyticGaussian, Gaussian, TruncatedLaplace

from .datasets import Dataset, one_hot
from .paths import RESULTS
from .provenance import provenance, read_json, write_json_atomic

__all__ = [
    "AdditiveNoise",
    "DDFamily",
    "DataDependentNoise",
    "PieceQuantiles",
    "coordinate_descent_loss",
    "coordinate_descent_losses",
    "ML_TOLERANCE",
    "ml_comparison_html",
    "NBDDFamily",
    "PCDDDFamily",
    "call_mechanism",
    "dilate_noise",
    "equal_mass_weight",
    "make_data_dependent",
    "nb_dd_edges",
    "pcd_dd_edges",
    "solve_dd_cached",
    "NoiseMechanism",
    "NonPrivate",
    "NBSettings",
    "NBStats",
    "PCDSettings",
    "improvement",
    "make_mechanisms",
    "ml_ledger_rows",
    "nb_errors",
    "nb_noisy_stats",
    "nb_sensitivities",
    "nb_statistics",
    "optimized_unit_noise",
    "paired_one_sided_ttest",
    "pcd_backend",
    "pcd_errors",
    "pcd_step_numpy",
    "pcd_train",
    "run_naive_bayes",
    "run_pcd",
    "split_indices",
    "summarize",
]

MECHANISM_ORDER = ("GN", "AG", "TLN", "OPT", "(OPT)")
_TINY = 1e-16  # uniforms are clipped to [_TINY, 1 - _TINY] so that Gaussian quantiles stay finite


# ----------------------------------------------------------------------------------------------
# Mechanisms
# ----------------------------------------------------------------------------------------------


class NoiseMechanism(Protocol):
    """A DP mechanism for a batch of scalar queries: ``mech(values, sensitivity, rng) -> noisy values``.

    ``values`` are the true query outputs (any shape), ``sensitivity`` broadcasts against them and
    ``rng`` is a :class:`numpy.random.Generator`. A data-independent mechanism ignores ``values``
    except to add to them; a data-dependent one may pick its noise distribution from ``values /
    sensitivity`` (the query in units of its sensitivity).
    """

    def __call__(self, values: np.ndarray, sensitivity, rng: np.random.Generator) -> np.ndarray: ...


@dataclass(frozen=True)
class AdditiveNoise:
    """values + sensitivity · X with X a unit-sensitivity noise drawn by inverse transform (``ppf``).

    Parameters
    ----------
    name : short label ("GN", "AG", "TLN", "OPT").
    unit_noise : object with ``ppf(u)`` (vectorised), calibrated for Δf = 1.
    """

    name: str
    unit_noise: object

    def unit_samples(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(self.unit_noise.ppf(np.clip(u, _TINY, 1.0 - _TINY)), dtype=float)

    def __call__(self, values, sensitivity, rng):
        values = np.asarray(values, dtype=float)
        return values + np.asarray(sensitivity, dtype=float) * self.unit_samples(rng.random(values.shape))


@dataclass(frozen=True)
class NonPrivate:
    """No noise (the NB / PCD columns)."""

    name: str = "NB"

    def __call__(self, values, sensitivity, rng):
        return np.asarray(values, dtype=float)


def optimized_unit_noise(epsilon: float = 1.0, delta: float = 0.1, *, rel_gap: float = 0.01, cache: str | Path | None = None):
    """The data-independent ℓ1-optimal noise for Δf = 1 (``dpdro.optimal_noise``), optionally cached as JSON.

    Returns ``(noise, info)`` with ``info`` the certified bounds, gap and δ of the released noise. The
    cache file (``results/ml/opt_noise_eps=1_delta=0.1.json``) holds the noise and ``info``; it is
    re-certified with :func:`dpdro.certify_delta` on load.
    """
    if cache is not None and Path(cache).is_file():
        data = read_json(cache)
        noise = PiecewiseUniform.from_dict(data["noise"])
        info = data["info"]
        if (info.get("epsilon"), info.get("delta"), info.get("sensitivity")) != (epsilon, delta, 1.0):
            raise ValueError(f"cache {cache} holds the noise for (epsilon, delta, sensitivity) = "
                             f"({info.get('epsilon')}, {info.get('delta')}, {info.get('sensitivity')}), not ({epsilon}, {delta}, 1.0)")
    else:
        res = optimal_noise(Problem(epsilon=epsilon, delta=delta, sensitivity=1.0, loss="l1"), rel_gap=rel_gap)
        noise = res.noise
        info = dict(epsilon=epsilon, delta=delta, sensitivity=1.0, loss="l1", rel_gap_target=rel_gap,
                    upper=res.upper.value, lower=res.lower.value, gap=res.gap, seconds=res.seconds,
                    n_cells=int(noise.probs.size))
        if cache is not None:
            write_json_atomic(cache, {"noise": noise.to_dict(), "info": info})
    certified = certify_delta(noise, epsilon=epsilon, sensitivity=1.0)
    if certified > delta:
        raise ValueError(f"optimised noise is only ({epsilon}, {certified})-DP, above delta = {delta}")
    info = dict(info, certified_delta=float(certified))
    return noise, info


def make_mechanisms(epsilon: float = 1.0, delta: float = 0.1, *, opt_noise=None) -> dict[str, AdditiveNoise]:
    """GN (classical Gaussian), AG (analytic Gaussian), TLN (truncated Laplace) and, if given, OPT."""
    mechs = {
        "GN": AdditiveNoise("GN", Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0)),
        "AG": AdditiveNoise("AG", AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=1.0)),
        "TLN": AdditiveNoise("TLN", TruncatedLaplace(epsilon=epsilon, delta=delta, sensitivity=1.0)),
    }
    if opt_noise is not None:
        mechs["OPT"] = AdditiveNoise("OPT", opt_noise)
    return mechs


# ----------------------------------------------------------------------------------------------
# Splits, statistics helpers
# ----------------------------------------------------------------------------------------------


def split_indices(n: int, rng: np.random.Generator, test_fraction: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split: ``floor(test_fraction · n)`` test rows (as the authors' ``train_test.jl``)."""
    perm = rng.permutation(n)
    n_test = int(math.floor(test_fraction * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def _seeds(seed: int, split: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence]:
    """Per split: the split permutation, the simulation randomness (shared by all mechanisms), spare."""
    return tuple(np.random.SeedSequence([seed, split]).spawn(3))


def paired_one_sided_ttest(ours: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    """One-sided paired t-test of H0: mean(ours − other) ≥ 0 against H1: ours has the smaller error.

    The GitHub appendix ("Statistical significance"): per split the errors are averaged over the
    simulations; the differences ``ours − other`` over the K splits give t = mean/(sd/√K) (sd with
    K − 1 degrees of freedom) and the p-value is the t(K − 1) cumulative probability at t.
    Returns ``(t, p)``; ``(nan, nan)`` for fewer than two splits, and t = ∓inf (p = 0 or 1) when all
    differences are equal and non-zero.
    """
    d = np.asarray(ours, dtype=float) - np.asarray(other, dtype=float)
    k = d.size
    if k < 2:
        return math.nan, math.nan
    m, s = float(d.mean()), float(d.std(ddof=1))
    if s == 0.0:
        if m == 0.0:
            return math.nan, math.nan
        return (-math.inf, 0.0) if m < 0 else (math.inf, 1.0)
    t = m / (s / math.sqrt(k))
    return t, float(stats.t.cdf(t, k - 1))


def improvement(best_literature: float, ours: float, nonprivate: float) -> float:
    """'Imp' of Tables 2 and 3: the share (%) of the gap between the best literature mechanism and the
    non-private method that ours closes, 100·(best − ours)/(best − non-private) (nan if the gap is 0)."""
    gap = best_literature - nonprivate
    return 100.0 * (best_literature - ours) / gap if gap != 0 else math.nan


# ----------------------------------------------------------------------------------------------
# Naïve Bayes (Section 5.2)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NBSettings:
    """Choices of the DP naïve Bayes experiment (module docstring). Default: our reading of the paper."""

    epsilon: float = 1.0
    delta: float = 0.1
    round_up_sensitivities: bool = False  # authors: ceil
    class_counts: str = "train"  # "train" (paper) or "full" (authors) for the sensitivities
    sd_floor: float = 0.01  # floor of noisy (and non-private) standard deviations ...
    sd_floor_relative: bool = True  # ... as a fraction of (u_v - l_v) (True) or in feature units (False)
    count_floor: float = 1e-6  # floor of noisy counts (authors: 1e-6)
    perturb_zero_counts: bool = True  # authors: False (only levels seen in training are perturbed)

    @classmethod
    def authors(cls, **kw) -> "NBSettings":
        """The settings of the authors' Julia code (``sensitivities.jl``, ``NB.jl``)."""
        base = dict(round_up_sensitivities=True, class_counts="full", sd_floor=1.0, sd_floor_relative=False,
                    perturb_zero_counts=False)
        base.update(kw)
        return cls(**base)


@dataclass(frozen=True)
class NBStats:
    """Naïve Bayes sufficient statistics of a training set.

    prior (C,), counts (L, C) over all levels of all categorical features stacked (``offsets[v]`` is the
    first row of feature v), means and sds (V, C) (population standard deviation, as the authors'
    ``std(..., corrected=false)``).
    """

    prior: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    sds: np.ndarray
    offsets: np.ndarray


def nb_statistics(ds: Dataset, rows: np.ndarray) -> NBStats:
    """The statistics of Section 5.2 on ``rows`` of ``ds``."""
    y = ds.y[rows]
    C = ds.n_classes
    prior = np.bincount(y, minlength=C).astype(float)
    sizes = np.array([len(lv) for lv in ds.cat_levels], dtype=int)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    L = int(offsets[-1])
    counts = np.zeros((L, C))
    if ds.n_cat:
        flat = ds.X_cat[rows] + offsets[:-1]  # (n, V_cat) global level index
        np.add.at(counts, (flat.ravel(), np.repeat(y, ds.n_cat)), 1.0)
    V = ds.n_num
    means = np.zeros((V, C))
    sds = np.zeros((V, C))
    Xn = ds.X_num[rows]
    for c in range(C):
        sel = Xn[y == c]
        if sel.shape[0]:
            means[:, c] = sel.mean(axis=0)
            sds[:, c] = sel.std(axis=0)
    return NBStats(prior, counts, means, sds, offsets)


def nb_sensitivities(ds: Dataset, train_prior: np.ndarray, settings: NBSettings) -> tuple[np.ndarray, np.ndarray]:
    """Sensitivities (V, C) of the class-conditional means (u−l)/n_c and standard deviations (u−l)/√n_c."""
    width = ds.num_bounds[:, 1] - ds.num_bounds[:, 0]
    if settings.class_counts == "train":
        nc = np.asarray(train_prior, dtype=float)
    elif settings.class_counts == "full":
        nc = np.bincount(ds.y, minlength=ds.n_classes).astype(float)
    else:
        raise ValueError(f"class_counts must be 'train' or 'full', got {settings.class_counts!r}")
    nc = np.maximum(nc, 1.0)
    s_mean = width[:, None] / nc[None, :]
    s_sd = width[:, None] / np.sqrt(nc)[None, :]
    if settings.round_up_sensitivities:
        s_mean, s_sd = np.ceil(s_mean), np.ceil(s_sd)
    return s_mean, s_sd


def _sd_floor(ds: Dataset, settings: NBSettings) -> np.ndarray:
    width = ds.num_bounds[:, 1] - ds.num_bounds[:, 0]
    if settings.sd_floor_relative:
        return np.maximum(settings.sd_floor * width, 1e-12)[:, None]
    return np.full((ds.n_num, 1), float(settings.sd_floor))


def nb_noisy_stats(ds: Dataset, st: NBStats, mech: Callable, n_sims: int, rng: np.random.Generator,
                   settings: NBSettings) -> dict[str, np.ndarray]:
    """``n_sims`` perturbed copies of the statistics: prior (S, C), counts (S, L, C), means/sds (S, V, C).

    One uniform stream per statistic type, drawn in a fixed order (prior, counts, means, sds), so that
    identically seeded ``rng`` give every mechanism the same uniforms (common random numbers). Noisy
    counts are floored at ``count_floor`` and noisy standard deviations at the sd floor (post-processing).
    Zero counts are perturbed unless ``settings.perturb_zero_counts`` is False, in which case they stay 0.
    Mechanisms with ``needs_range`` (the data-dependent (OPT)) also get the range Φ of each statistic:
    [0, n] for counts (n the training-set size), [l_v, u_v] for means, [0, (u_v − l_v)/2] for the
    population standard deviations.
    """
    S = int(n_sims)
    s_mean, s_sd = nb_sensitivities(ds, st.prior, settings)
    n = float(st.prior.sum())  # public training-set size: counts lie in [0, n]
    lo, hi = ds.num_bounds[:, :1], ds.num_bounds[:, 1:]  # (V, 1): means in [l_v, u_v], sds in [0, (u_v - l_v)/2]
    prior = call_mechanism(mech, np.broadcast_to(st.prior, (S,) + st.prior.shape), 1.0, rng, 0.0, n)
    counts = call_mechanism(mech, np.broadcast_to(st.counts, (S,) + st.counts.shape), 1.0, rng, 0.0, n)
    means = call_mechanism(mech, np.broadcast_to(st.means, (S,) + st.means.shape), s_mean, rng, lo, hi)
    sds = call_mechanism(mech, np.broadcast_to(st.sds, (S,) + st.sds.shape), s_sd, rng, 0.0, (hi - lo) / 2.0)
    floor = settings.count_floor
    prior = np.maximum(prior, floor)
    counts = np.maximum(counts, floor)
    if not settings.perturb_zero_counts:
        counts = np.where(st.counts[None] > 0, counts, 0.0)
    sds = np.maximum(sds, _sd_floor(ds, settings)[None])
    return dict(prior=prior, counts=counts, means=means, sds=sds)


def _nb_onehot(ds: Dataset, rows: np.ndarray, offsets: np.ndarray):
    n = rows.size
    if not ds.n_cat:
        return None
    flat = (ds.X_cat[rows] + offsets[:-1]).ravel()
    r = np.repeat(np.arange(n), ds.n_cat)
    return sparse.csr_matrix((np.ones(flat.size), (r, flat)), shape=(n, int(offsets[-1])))


def nb_errors(ds: Dataset, rows: np.ndarray, noisy: Mapping[str, np.ndarray], *, max_block_cells: int = 4_000_000) -> np.ndarray:
    """Misclassification rate (S,) on ``rows`` of each of the S naïve Bayes classifiers in ``noisy``.

    Score of class c: log ñ_c + Σ_v log(ñ_{v,x_v,c}/ñ_c) + Σ_v log N(x_v; μ̃_{v,c}, σ̃²_{v,c}); the
    Gaussian part is expanded into matrix products (x² · (−1/2σ²) + x · μ/σ² − μ²/2σ² − log σ), the
    categorical part is a sparse one-hot product. A zero count (when zeros are not perturbed) gives
    score −inf as in the authors' code; ties go to the first class. Simulations are processed in blocks
    of at most ``max_block_cells / (n·C)`` at a time (memory).
    """
    prior, counts, means, sds = noisy["prior"], noisy["counts"], noisy["means"], noisy["sds"]
    S, C = prior.shape
    offsets = np.concatenate(([0], np.cumsum([len(lv) for lv in ds.cat_levels]))).astype(int)
    A = _nb_onehot(ds, rows, offsets)
    Xn = ds.X_num[rows]
    y = ds.y[rows]
    n = rows.size
    block = max(1, int(max_block_cells // max(1, n * C)))
    errs = np.empty(S)
    with np.errstate(divide="ignore"):
        for s0 in range(0, S, block):
            sl = slice(s0, min(S, s0 + block))
            b = sl.stop - sl.start
            logp = np.log(prior[sl])  # (b, C)
            score = np.broadcast_to((1 - ds.n_cat) * logp[:, None, :], (b, n, C)).copy()
            if A is not None:
                logc = np.log(counts[sl])  # (b, L, C)
                part = A @ logc.transpose(1, 0, 2).reshape(A.shape[1], b * C)  # (n, b*C)
                score += np.asarray(part).reshape(n, b, C).transpose(1, 0, 2)
            if ds.n_num:
                mu, sd = means[sl], sds[sl]  # (b, V, C)
                prec = 1.0 / (sd * sd)
                Q = (-0.5 * prec).transpose(1, 0, 2).reshape(ds.n_num, b * C)
                P = (mu * prec).transpose(1, 0, 2).reshape(ds.n_num, b * C)
                R = np.sum(-0.5 * mu * mu * prec - np.log(sd), axis=1)  # (b, C)
                g = (Xn * Xn) @ Q + Xn @ P  # (n, b*C)
                score += g.reshape(n, b, C).transpose(1, 0, 2) + R[:, None, :]
            score = np.where(np.isnan(score), -np.inf, score)
            pred = np.argmax(score, axis=2)  # (b, n)
            errs[sl] = np.mean(pred != y[None, :], axis=1)
    return errs


def run_naive_bayes(ds: Dataset, mechanisms: Mapping[str, Callable], *, n_splits: int, n_sims: int, seed: int = 0,
                    settings: NBSettings = NBSettings(), baseline: bool = True, first_split: int = 0) -> dict:
    """DP naïve Bayes on ``n_splits`` random 80/20 splits × ``n_sims`` noise simulations per mechanism.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}``: per split, the error averaged over the
    simulations; ``"NB"`` is the non-private classifier (same floors). Seeds: the split and the noise
    of split k come from ``SeedSequence([seed, k])``; every mechanism gets the same noise seed, so a
    mechanism's errors do not depend on which other mechanisms are run with it (``baseline=False``
    skips NB, e.g. to add one column to a stored run). ``first_split``: run the splits
    ``first_split, …, first_split + n_splits − 1`` (a chunk of a larger run: splits are independent,
    so chunks concatenate to the whole run).
    """
    extra = [("NB", NonPrivate())] if baseline else []
    res = {"in": {m: np.empty(n_splits) for m in [*mechanisms, *dict(extra)]},
           "out": {m: np.empty(n_splits) for m in [*mechanisms, *dict(extra)]}}
    for i in range(n_splits):
        k = first_split + i
        s_split, s_noise, _ = _seeds(seed, k)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        st = nb_statistics(ds, train)
        for name, mech in [*mechanisms.items(), *extra]:
            sims = 1 if name == "NB" else n_sims
            noisy = nb_noisy_stats(ds, st, mech, sims, np.random.default_rng(s_noise), settings)
            res["in"][name][i] = nb_errors(ds, train, noisy).mean()
            res["out"][name][i] = nb_errors(ds, test, noisy).mean()
    return res


# ----------------------------------------------------------------------------------------------
# Proximal coordinate descent (Section 5.3)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PCDSettings:
    """Section 5.3: T = 100 iterations, K = ⌈d/4⌉ updates each, λ = 1e-8, sensitivity 2, (ε, δ) = (1, 0.1)."""

    epsilon: float = 1.0
    delta: float = 0.1
    T: int = 100
    K: int | None = None  # None: ceil(d / 4)
    lam: float = 1e-8
    sensitivity: float = 2.0
    step: float = 1.0


def pcd_train(X: np.ndarray, y: np.ndarray, mech: Callable, n_sims: int, rng_init: np.random.Generator,
              rng_noise: np.random.Generator, settings: PCDSettings = PCDSettings(), record_queries: bool = False,
              *, dtype=np.float32, backend: str | None = None, parallel: bool = False):
    r"""Run ``n_sims`` DP proximal coordinate descents at once; returns the last iterates H (S, d)
    (and, if ``record_queries``, the true query values (T·K, S) before noise).

    Per iteration t: each simulation draws its own K coordinates without replacement; update k of
    simulation s perturbs q = Σ_i σ(−y_i m_i)(−y_i x_{i,l}) (m the margins y_i h^⊤x_i) with
    ``mech(q, sensitivity, rng_noise)`` (a mechanism with ``needs_range`` also gets Φ = [−n, n], the
    GitHub appendix's range of the query) and sets h_l ← prox_{ηλ|·|}(h_l − η·q̃/n); h^t is the average
    of the K inner iterates. ``rng_init`` draws the initial points (uniform on [−1, 1]^d) and the
    coordinate orders, so identically seeded generators give every mechanism the same ones.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Design matrix, |x_il| ≤ 1.
    y : ndarray, shape (n,)
        Labels in {−1, +1}.
    mech : callable
        The mechanism, called as :func:`call_mechanism` does, once per inner step with the S queries.
    n_sims : int
        Number S of simulations run together.
    rng_init, rng_noise : numpy.random.Generator
        Initial points and coordinate orders; the mechanism's uniforms.
    settings : PCDSettings
        T, K, step η, λ, sensitivity.
    record_queries : bool
        Also return the true queries, shape (T·K, S).
    dtype : {numpy.float32, numpy.float64}, keyword-only
        Precision of the margins, of y_i x_il and of σ (below). ``numpy.float64`` reproduces the
        straightforward implementation (:func:`repro.brute.pcd_train_reference`) to rounding error.
    backend : {"numba", "numpy"} or None, keyword-only
        The fused step: the numba kernel (:mod:`repro.pcd_kernels`) or the numpy fallback; None: numba
        when it is importable (:func:`pcd_backend`).
    parallel : bool, keyword-only
        numba backend only: spread the simulations of each step over numba's threads. Off by default:
        paper-scale runs are parallel over splits (one single-threaded process per core), and on a
        busy machine a thread that waits for a core stalls every step.

    Returns
    -------
    H : ndarray, shape (S, d)
        Last iterates (float64).
    queries : ndarray, shape (T·K, S)
        Only with ``record_queries``.

    Notes
    -----
    **Random numbers.** The same draws as the straightforward implementation, in the same order:
    ``rng_init.random((S, d))`` for the initial points, then per iteration ``rng_init.random((S, d))``
    for the coordinate orders (argsort), and one mechanism call per inner step with the vector of the
    S queries. Every mechanism's noise is therefore unchanged; only the rounding of q differs.

    **Fusion.** Step k of simulation s needs the margins after update k−1, so one pass over the margin
    row applies update k−1 (m_i ← m_i + δ_{k−1}·y_i x_{i,j_{k−1}}) and accumulates
    q_k = −Σ_i σ(−m_i)·y_i x_{i,j_k}: one read and one write of the (S, n) margins per step instead of
    about eight passes (the gather ``YX[j]``, four passes of a tanh-based σ, the product, the scaled
    update). The last update of an iteration is never applied: the margins are recomputed from the
    averaged iterate at the start of the next iteration (float64 BLAS, rounded once to ``dtype``).

    **Precision of the float32 default.** Only the margins, y_i x_il and σ are float32; the iterates,
    the updates, the margin recomputation and the sum across blocks of 256 samples stay float64.
    A margin's float32 error builds up over at most K = ⌈d/4⌉ fused updates, ≤ (K + 1)·2⁻²⁴·(max|m| +
    3 max|δ|); σ has slope ≤ ¼; a float32 block sum of 256 terms in [−1, 1] errs by ≲ 8e-7 of Σ|terms|
    in the vectorised order. Hence |Δq| ≤ n·(8e-7 + 2.4e-7 + ¼·1.5e-6·(max|m| + 3 max|δ|)) in the worst
    case (≈ 0.2 on adult) and of order √n times the per-term error in practice (measured on adult:
    ≤ 5e-4). The mechanisms add noise of standard deviation 1.8 (OPT) to 4.5 (GN) to q, and the step
    divides q by n. What float32 can change is the rounding-level trajectory (|ΔH| ≈ 1e-8), hence,
    rarely, the sign of h^⊤x of a sample on the decision boundary or, for the data-dependent (OPT), the
    piece of a query within ~1e-4 of a piece edge: far below the Monte Carlo error of the tables
    (``tests/repro/test_pcd.py`` states the check). As in float64, the *computed* query has
    sensitivity 2 + O(rounding error) rather than exactly 2 (about 1e-3 here against 1e-12): a
    floating-point caveat of any implementation, irrelevant to this reproduction, which releases nothing.
    """
    step = _pcd_step(backend, parallel)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    n, d = X.shape
    S = int(n_sims)
    K = settings.K if settings.K is not None else int(math.ceil(d / 4))
    H = (rng_init.random((S, d)) - 0.5) * 2.0
    YX64 = np.ascontiguousarray(X.T * y.astype(float)[None, :])  # (d, n): row l holds y_i x_il
    YX = YX64.astype(dtype)
    rows = np.arange(S)
    M = np.empty((S, n), dtype=dtype)
    queries = [] if record_queries else None
    for _t in range(settings.T):
        order = np.argsort(rng_init.random((S, d)), axis=1)[:, :K]  # K distinct coordinates per sim
        _pcd_margins(H, YX64, M)
        Hsum = np.zeros_like(H)
        columns = np.ascontiguousarray(order.T)  # (K, S): row k holds the k-th coordinate of every sim
        jprev, delta = columns[0], np.zeros(S, dtype=dtype)
        for j in columns:
            q = np.empty(S)
            step(M, YX, jprev, delta, j, q)
            if record_queries:
                queries.append(q.copy())
            qn = call_mechanism(mech, q, settings.sensitivity, rng_noise, -float(n), float(n))
            delta = _pcd_prox(H, rows, j, qn, n, settings.step, settings.lam).astype(dtype)
            jprev = j
            Hsum += H
        H = Hsum / K
    if record_queries:
        return H, np.asarray(queries)
    return H


PCD_BACKENDS = ("numba", "numpy")
_PCD_BLOCK = 1 << 18  # margins per block of the numpy step (1 MiB in float32: the passes stay in cache)
_PCD_GEMM_BLOCK = 1 << 22  # margins per float64 block of the margin recomputation (32 MiB)
_UNSET = object()
_NUMBA_STEPS = _UNSET  # {parallel: kernel} from repro.pcd_kernels, None without numba (imported on first use)


def _numba_steps():
    global _NUMBA_STEPS
    if _NUMBA_STEPS is _UNSET:
        try:
            from . import pcd_kernels
        except ImportError:  # pragma: no cover - installs without numba
            _NUMBA_STEPS = None
        else:
            _NUMBA_STEPS = {False: pcd_kernels.fused_step, True: pcd_kernels.fused_step_parallel}
    return _NUMBA_STEPS


def pcd_backend() -> str:
    """The default backend of :func:`pcd_train`: ``"numba"`` when numba is importable, else ``"numpy"``."""
    return "numba" if _numba_steps() is not None else "numpy"


def _pcd_step(backend: str | None, parallel: bool):
    backend = pcd_backend() if backend is None else backend
    if backend not in PCD_BACKENDS:
        raise ValueError(f"backend must be one of {PCD_BACKENDS} or None, got {backend!r}")
    if backend == "numpy":
        return pcd_step_numpy
    steps = _numba_steps()
    if steps is None:
        raise ImportError("backend='numba' needs numba (pip install numba), or use backend='numpy'")
    return steps[bool(parallel)]


def _row_blocks(S: int, n: int, elements: int):
    rows = max(1, elements // max(n, 1))
    return [slice(lo, min(lo + rows, S)) for lo in range(0, S, rows)]


def pcd_step_numpy(M, YX, jprev, delta, j, q):
    """The fused step of :func:`repro.pcd_kernels.fused_step` in numpy (same arguments and effect):
    ``M[s] += delta[s]·YX[jprev[s]]``, then ``q[s] = −Σ_i σ(−M[s, i])·YX[j[s], i]`` (summed in float64),
    by blocks of simulations whose margins stay in cache."""
    from scipy import special

    S, n = M.shape
    for b in _row_blocks(S, n, _PCD_BLOCK):
        m = M[b]
        m += delta[b, None] * YX[jprev[b]]
        q[b] = -np.einsum("sn,sn->s", special.expit(-m), YX[j[b]], dtype=np.float64)


def _pcd_margins(H, YX64, out):
    """``out = H @ YX64`` computed in float64 (BLAS) and rounded to ``out.dtype`` block by block."""
    if out.dtype == np.float64:
        np.matmul(H, YX64, out=out)
        return
    for b in _row_blocks(*out.shape, _PCD_GEMM_BLOCK):
        out[b] = H[b] @ YX64


def _pcd_prox(H, rows, j, qn, n, eta, lam):
    """h_j ← prox_{ηλ|·|}(h_j − η·q̃/n) for every simulation (in place); returns the change of h_j."""
    old = H[rows, j]
    z = old - eta * qn / n
    new = np.sign(z) * np.maximum(np.abs(z) - eta * lam, 0.0)
    H[rows, j] = new
    return new - old


def pcd_errors(H: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Misclassification rate (S,) of the hyperplanes H (S, d): predict +1 iff h^⊤x ≥ 0."""
    pred = np.where(X @ H.T >= 0.0, 1, -1)  # (n, S)
    return np.mean(pred != y[:, None], axis=0)


def run_pcd(ds: Dataset, mechanisms: Mapping[str, Callable], *, n_splits: int, n_sims: int, seed: int = 0,
            settings: PCDSettings = PCDSettings(), design=None, nonprivate_sims: int | None = None,
            baseline: bool = True, first_split: int = 0, pcd_options: Mapping | None = None) -> dict:
    """DP proximal coordinate descent on ``n_splits`` random 80/20 splits × ``n_sims`` simulations.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}`` (errors of the last iterate averaged over the
    simulations); ``"PCD"`` is the non-private method (random too: initial point and coordinates) run
    with ``nonprivate_sims`` (default ``n_sims``) simulations (skipped if ``baseline=False``). ``design``
    defaults to ``one_hot(ds)``. ``first_split``: as in :func:`run_naive_bayes` (splits
    ``first_split, …``; chunks concatenate to the whole run). ``pcd_options``: keyword-only options of
    :func:`pcd_train` (``dtype``, ``backend``, ``parallel``; default: float32 on numba, one thread).
    """
    design = one_hot(ds) if design is None else design
    X, y = design.X, design.y
    extra = [("PCD", NonPrivate("PCD"))] if baseline else []
    names = [*mechanisms, *dict(extra)]
    res = {"in": {m: np.empty(n_splits) for m in names}, "out": {m: np.empty(n_splits) for m in names}}
    for i in range(n_splits):
        s_split, s_noise, s_init = _seeds(seed, first_split + i)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        for name, mech in [*mechanisms.items(), *extra]:
            sims = (nonprivate_sims or n_sims) if name == "PCD" else n_sims
            H = pcd_train(X[train], y[train], mech, sims, np.random.default_rng(s_init),
                          np.random.default_rng(s_noise), settings, **(pcd_options or {}))
            res["in"][name][i] = pcd_errors(H, X[train], y[train]).mean()
            res["out"][name][i] = pcd_errors(H, X[test], y[test]).mean()
    return res


# ----------------------------------------------------------------------------------------------
# Summaries
# ----------------------------------------------------------------------------------------------


def summarize(res: Mapping, *, baseline: str, ours: str = "OPT", literature: Sequence[str] = ("GN", "AG", "TLN"),
              dd: str = "(OPT)") -> dict:
    """Table row from :func:`run_naive_bayes` / :func:`run_pcd` output: mean errors (%), Imp (%),
    the best literature mechanism, and the one-sided paired t-test of ``ours`` against it (per sample);
    if the data-dependent column ``dd`` is present, also its Imp and t-test (``imp_dd``, ``t_dd``, ``p_dd``)."""
    out = {}
    for side in ("in", "out"):
        errs = {m: 100.0 * float(np.mean(v)) for m, v in res[side].items()}
        row = dict(errors=errs)
        if ours in errs:
            lit = [m for m in literature if m in errs]
            best = min(lit, key=lambda m: errs[m])
            row["best_literature"] = best
            row["imp"] = improvement(errs[best], errs[ours], errs[baseline])
            t, p = paired_one_sided_ttest(res[side][ours], res[side][best])
            row["t"], row["p"] = t, p
            if dd in errs:  # the data-dependent column: Imp and t-test against the same best literature mechanism
                row["imp_dd"] = improvement(errs[best], errs[dd], errs[baseline])
                row["t_dd"], row["p_dd"] = paired_one_sided_ttest(res[side][dd], res[side][best])
        out[side] = row
    return out


# ----------------------------------------------------------------------------------------------
# Stored results (repro.ml_tables, scripts/sweep.py table2 table3) and the paper's tables
# ----------------------------------------------------------------------------------------------

RESULTS_DIR = RESULTS / "ml"


def paper_tables(path: str | Path | None = None) -> dict:
    """The paper's Tables 2 and 3 as typed in ``results/ml/paper_tables.json`` (PAPER data, not computed)."""
    return read_json(path or RESULTS_DIR / "paper_tables.json")


def stored_results(table: int, variant: str = "paper", *, splits: int | None = None, sims: int | None = None,
                   dataset: str | None = None, directory: str | Path | None = None) -> dict | None:
    """A stored result file ``table{table}_{variant}_{splits}x{sims}.json`` (parsed), or None.

    Without ``splits``/``sims``: the file with the most splits × simulations (among those holding
    ``dataset``, if given). The returned dict gets ``"splits"``, ``"sims"`` and ``"file"`` keys.
    """
    directory = Path(directory or RESULTS_DIR)
    best = None
    for p in sorted(directory.glob(f"table{table}_{variant}_*x*.json")):
        m = re.fullmatch(rf"table{table}_{variant}_(\d+)x(\d+)\.json", p.name)
        if not m:
            continue
        k, s = int(m.group(1)), int(m.group(2))
        if (splits is not None and k != splits) or (sims is not None and s != sims):
            continue
        data = json.loads(p.read_text())
        if dataset is not None and dataset not in data.get("datasets", {}):
            continue
        if best is None or k * s > best["splits"] * best["sims"]:
            best = dict(data, splits=k, sims=s, file=p.name)
    return best


def dp_ranking(errors: Mapping[str, float], mechanisms: Sequence[str] = MECHANISM_ORDER) -> list[str]:
    """The DP mechanisms ordered from the smallest error to the largest (stable for ties)."""
    return sorted([m for m in mechanisms if m in errors], key=lambda m: errors[m])


# ----------------------------------------------------------------------------------------------
# The data-dependent mechanism "(OPT)" (Sections 5.2-5.3, GitHub appendix)
# ----------------------------------------------------------------------------------------------
#
# How (OPT) is built (choices, each documented here and in the notebooks):
#
# * A data-dependent mechanism needs the bounded range Φ = [φ_lo, φ_hi] of each perturbed statistic
#   (Observation 2). Naïve Bayes: counts n_{y=c} and n_{x_v=χ ∧ y=c} lie in [0, n] (n the public
#   training-set size), means μ_{x_v|y=c} in [l_v, u_v], population standard deviations σ_{x_v|y=c} in
#   [0, (u_v − l_v)/2]. Coordinate descent: the gradient sum lies in (−n, n) (GitHub appendix).
# * All noises are computed for Δf = 1 on the query in units of its sensitivity, t = (ϕ − φ_lo)/Δf ∈
#   [0, R), R = (φ_hi − φ_lo)/Δf; the added noise is Δf·X(t). For naïve Bayes (ℓ1 loss, positively
#   homogeneous) this is exact, as for OPT. A mechanism designed for a range [0, R′) ⊇ [0, R] is also
#   DP on [0, R] (restriction), so R is rounded *up* to a small set of keys and one problem is solved
#   per key (``DDFamily.key``).
# * Pieces (Algorithm G.1) and weights: the appendix optimises "7 noise distributions" on a partition of
#   Φ "designed non-uniformly", with "50 equally sized intervals" of the noise support. For naïve Bayes
#   we use 7 pieces, fine near the two *ends* of Φ, [0, .5, 1, 2, R−2, R−1, R−.5, R] (Δf units) when
#   R ≥ 5.2, and 7 (or R/β, if fewer) equal pieces for smaller R: with the ℓ1 loss a data-dependent
#   noise can only gain where the range ends (inside a piece wider than Δf + β the constraints are
#   those of the data-independent problem), and near 0 is where small counts and standard deviations
#   are. For coordinate descent we follow the appendix: fine pieces at the centre of Φ (query values
#   accumulate around 0), coarse tails, one handcrafted loss per piece (coordinate_descent_losses below:
#   ℓ1 up to the knee, slope 1000 on the sign-flipping side), knee 1 (the
#   paper's knee is not given). Default design: the appendix's 42 pieces for cylinder-bands (width 0.5
#   on [−10, 10), 0 an edge). The alternative "seven" design (−n, −3, −1, −0.2, 0.2, 1, 3, n, the
#   appendix's "7 intervals") has a piece around 0 penalised on both sides, and its 7 optimal noises
#   coincide in one symmetric noise (no gain; see 32_coordinate_descent).
#   Weights w: the paper's w is uniform on Φ; with Φ = [0, n] and n up to 45,000 that would give the
#   small pieces a weight of order 1e-5 (the LP would then barely care about them), so every piece gets
#   the same mass 1/M (the appendix allows a non-uniform w "so that more importance is given to the
#   intervals" of interest).
# * Noise partition: Partition.uniform(L, β) with 2L = 50 cells covering the truncated Laplace support
#   rounded up (naïve Bayes, Δf = 1: [−2.5, 2.5), β = 0.1; coordinate descent, Δf = 2: [−5, 5),
#   β = 0.2 for "seven", β = 0.25 (40 cells) for the 42 pieces, whose edges must lie on the grid), as in
#   the appendix ("50 equally sized intervals", support "rounding up the support needed
#   by the Truncated Laplace mechanism").
# * When a range is wide (R ≥ 5.2 for naïve Bayes, n ≥ the design's n0 for coordinate descent) the LP does not
#   depend on R any more (pieces further apart than Δf share no constraint, equal piece masses), so one
#   solve serves every R: its noises are reused with the piece edges moved to the actual range, and the
#   moved mechanism is certified again (exactly, dpdro.data_dependent.certify_delta) before use.
# * Solved mechanisms are cached in results/ml/dd_mechanisms.json (dpdro.data_dependent.Mechanism.to_dict()
#   plus provenance) and re-certified (mechanism.certify() <= δ) on load.

DD_CACHE = RESULTS_DIR / "dd_mechanisms.json"
NB_DD_BETA, NB_DD_L = 0.1, 25  # Δf = 1: cells [-2.5, 2.5), 50 cells
NB_DD_STEP = 0.5  # small ranges are rounded up to a multiple of this (Δf units)
NB_DD_WIDE = 5.2  # from this R on, the end-refined 7-piece design (R-independent LP)
DD_WIDE_SLACK = 1e-6  # the R-independent solves use δ − 1e-6: the exact certificate of a mechanism moved to
# a range far from 0 carries a floating-point error bound growing with |edges| (≈ 5e-11 at R = 269)
# Coordinate descent designs (query units, Δf = 2; tails from the outermost inner edge to ±n):
#   "appendix42": the GitHub appendix's partition for cylinder-bands, [−n, −10), pieces of width 0.5 on
#       [−10, 10), [10, n) (42 pieces, 0 is an edge); noise cells of width β = 0.25 on [−5, 5) (40 cells:
#       50 cells of width 0.2 would not put the piece edges on the grid); solved on Φ = [−16, 16).
#   "seven": 7 pieces −n, −3, −1, −0.2, 0.2, 1, 3, n (the appendix's "7 intervals", finer at the centre),
#       50 cells of width 0.2 on [−5, 5); solved on Φ = [−6, 6).
PCD_DD_DESIGNS = {
    "appendix42": dict(inner=tuple(float(x) for x in np.arange(-20, 21) / 2.0), beta=0.25, L=20, n0=16.0),
    "seven": dict(inner=(-3.0, -1.0, -0.2, 0.2, 1.0, 3.0), beta=0.2, L=25, n0=6.0),
}
PCD_DD_DESIGN = "appendix42"


def equal_mass_weight(edges: np.ndarray):
    """The piecewise-constant density ``(edges, values)`` giving every piece [e_l, e_{l+1}) the same mass."""
    e = np.asarray(edges, dtype=float)
    return e, 1.0 / np.diff(e)


def nb_dd_edges(R: float) -> np.ndarray:
    """Piece edges (Δf units) of the naïve Bayes (OPT) on [0, R) (R a key of :class:`NBDDFamily`)."""
    b = NB_DD_BETA
    k = int(round(R / b))
    if R >= NB_DD_WIDE - 1e-9:
        ticks = np.array([0, 5, 10, 20, k - 20, k - 10, k - 5, k])
    else:
        ticks = np.unique(np.round(np.linspace(0, k, min(7, k) + 1)).astype(int))
    return ticks * b


def _dd_provenance(problem_desc: dict, ub, seconds: float) -> dict:
    return dict(problem=problem_desc, value=float(ub.value), piece_losses=np.asarray(ub.piece_losses).tolist(),
                weights=np.asarray(ub.weights).tolist(), certified_delta=float(ub.certified_delta),
                iterations=int(ub.iterations), repair_weight=float(ub.repair_weight), **provenance(seconds))


def solve_dd_cached(key: str, build: Callable[[], tuple], *, cache: str | Path | None = DD_CACHE, solve: bool = True):
    """The data-dependent mechanism ``key`` from the JSON cache, or solved and stored.

    ``build()`` returns ``(problem, partition, description)``; the description (a JSON dict of the problem
    parameters) must equal the cached one, else the entry is recomputed. The loaded mechanism is
    re-certified: ``mechanism.certify() <= delta`` (ValueError otherwise). Returns ``(mechanism, info)``.
    """
    problem, partition, desc = build()
    store = {}
    if cache is not None and Path(cache).is_file():
        store = read_json(cache)
    entry = store.get(key)
    if entry is not None and entry["provenance"]["problem"] == desc:
        mech = dd.Mechanism.from_dict(entry["mechanism"])
        info = entry["provenance"]
    else:
        if not solve:
            raise KeyError(f"data-dependent mechanism {key!r} is not in the cache {cache}")
        t0 = time.perf_counter()
        ub = dd.upper_bound(problem, partition)
        mech = ub.mechanism
        info = _dd_provenance(desc, ub, time.perf_counter() - t0)
        if cache is not None:
            store = read_json(cache) if Path(cache).is_file() else {}
            store[key] = dict(mechanism=mech.to_dict(), provenance=info)
            write_json_atomic(cache, dict(sorted(store.items())))
    certified = mech.certify()
    if not certified <= mech.delta:
        raise ValueError(f"cached data-dependent mechanism {key!r} is only ({mech.epsilon}, {certified})-DP, above "
                         f"delta = {mech.delta}")
    return mech, dict(info, recertified_delta=float(certified))


def dilate_noise(noise, factor: float):
    """The noise of ``factor · X`` for a PiecewiseUniform X (edges and grid scaled, probabilities kept)."""
    grid = None if noise.grid is None else noise.grid * factor
    return PiecewiseUniform(noise.edges * factor, noise.probs, grid=grid, metadata=dict(noise.metadata))


class DDFamily:
    """Unit-sensitivity data-dependent mechanisms for query ranges of any width (base class).

    ``embed(lo, hi, s)`` gives, elementwise, the designed range [lo′, lo′ + key·s] ⊇ [lo, hi] (``key`` in
    units of the sensitivity s); ``mechanism(key)`` the certified unit mechanism on [0, key). A value at
    the right end (t = key, e.g. a count equal to n) is assigned to the last piece: closing Φ on the
    right changes no privacy constraint's supremum (δ_{l,l′}(φ) is continuous and the certificate
    already maximises over the closed shift ranges).
    """

    def __init__(self, epsilon: float = 1.0, delta: float = 0.1, *, cache: str | Path | None = DD_CACHE, solve: bool = True):
        self.epsilon, self.delta, self.cache, self.solve = float(epsilon), float(delta), cache, solve
        self._mechs: dict[float, object] = {}
        self._solves: dict[str, object] = {}
        self.solved: dict[str, dict] = {}  # key -> provenance of the solves used

    def mechanism(self, key: float):
        key = float(key)
        if key not in self._mechs:
            self._mechs[key] = self._build(key)
        return self._mechs[key]


class NBDDFamily(DDFamily):
    """(OPT) of naïve Bayes: ℓ1 loss, Δf = 1, Φ = [0, R) with the pieces of :func:`nb_dd_edges`."""

    def embed(self, lo, hi, s):
        R = (np.asarray(hi, float) - np.asarray(lo, float)) / np.asarray(s, float)
        small = np.ceil((R + 1e-9) / NB_DD_STEP) * NB_DD_STEP
        wide = np.maximum(np.ceil(np.round((R + 1e-9) / NB_DD_BETA, 6)) * NB_DD_BETA, NB_DD_WIDE)
        key = np.where(R + 1e-9 >= NB_DD_WIDE - 0.1 - 1e-9, wide, small)
        return np.asarray(lo, float), np.round(key, 6)

    def build_problem(self, R: float):
        """``(problem, partition, description)`` of the solve for the key R (Δf = 1, Φ = [0, R))."""
        delta = self.delta - DD_WIDE_SLACK if R >= NB_DD_WIDE - 1e-9 else self.delta
        e = nb_dd_edges(R)
        prob = dd.Problem(epsilon=self.epsilon, delta=delta, sensitivity=1.0, loss="l1", phi_lo=0.0,
                                    phi_hi=float(e[-1]), pieces=e, weight=equal_mass_weight(e))
        desc = dict(kind="naive Bayes (OPT)", epsilon=self.epsilon, delta=delta, sensitivity=1.0, loss="l1",
                    phi=[0.0, float(e[-1])], piece_edges=e.tolist(), weight="equal mass per piece",
                    partition=dict(L=NB_DD_L, beta=NB_DD_BETA))
        return prob, Partition.uniform(L=NB_DD_L, beta=NB_DD_BETA), desc

    def _solve(self, R: float):
        name = f"nb_l1_eps={self.epsilon:g}_delta={self.delta:g}_R={R:g}"
        if name not in self._solves:
            mech, info = solve_dd_cached(name, lambda: self.build_problem(R), cache=self.cache, solve=self.solve)
            self._solves[name], self.solved[name] = mech, info
        return self._solves[name]

    def _build(self, key: float):
        if key < NB_DD_WIDE - 1e-9:
            return self._solve(key)
        base = self._solve(NB_DD_WIDE)
        if abs(key - NB_DD_WIDE) < 1e-9:
            return base
        mech = dd.Mechanism(base.noises, nb_dd_edges(key), base.epsilon, self.delta, base.sensitivity)
        d = mech.certify()
        if not d <= mech.delta:  # pragma: no cover - the LP is R-independent from NB_DD_WIDE on
            raise ValueError(f"moved mechanism for R = {key} is only ({mech.epsilon}, {d})-DP")
        return mech


def coordinate_descent_loss(sign: float, *, knee: float = 1.0, slope: float = 1000.0) -> PiecewiseLinear:
    """The handcrafted loss of the proximal coordinate descent experiment (Section 5.3, GitHub appendix).

    c(x) = |x| for |x| ≤ ``knee``; beyond the knee the side *opposite to the query's sign* (the side
    where the noise would flip the sign of a gradient coordinate) rises with slope ``slope`` and the
    other side keeps slope 1. ``sign > 0``: steep for x < −knee; ``sign < 0``: steep for x > knee;
    ``sign == 0`` (a piece containing 0): steep on both sides, the symmetric reading of the paper's
    "slopes of −1,000 and 1,000 for large negative and positive values".
    """
    sign = check_real("sign", sign)
    knee = check_positive("knee", knee)
    slope = check_positive("slope", slope)
    left = -slope if sign >= 0 else -1.0
    right = slope if sign <= 0 else 1.0
    tag = "+" if sign > 0 else "-" if sign < 0 else "0"
    return PiecewiseLinear([-knee, 0.0, knee], [knee, 0.0, knee], left_slope=left, right_slope=right,
                           name=f"coordinate descent (sign {tag}, knee {knee:g}, slope {slope:g})")


def coordinate_descent_losses(piece_edges, *, knee: float = 1.0, slope: float = 1000.0) -> list[PiecewiseLinear]:
    """One :func:`coordinate_descent_loss` per piece [e_l, e_{l+1}): the sign is that of the piece
    (0 for a piece containing 0 in its interior)."""
    e = np.asarray(piece_edges, dtype=float)
    out = []
    for a, b in zip(e[:-1], e[1:]):
        s = 1.0 if a >= 0 else -1.0 if b <= 0 else 0.0
        out.append(coordinate_descent_loss(s, knee=knee, slope=slope))
    return out


def pcd_dd_edges(n: float, design: str = PCD_DD_DESIGN) -> np.ndarray:
    """Piece edges (query units) of the coordinate-descent (OPT) on Φ = [−n, n) (``PCD_DD_DESIGNS``)."""
    return np.array([-float(n), *PCD_DD_DESIGNS[design]["inner"], float(n)])


class PCDDDFamily(DDFamily):
    """(OPT) of proximal coordinate descent: handcrafted loss per piece, Δf = 2, Φ = [−n, n), pieces
    :func:`pcd_dd_edges`; solved in query units and rescaled to Δf = 1 (position t = (ϕ + n)/2)."""

    def __init__(self, epsilon: float = 1.0, delta: float = 0.1, *, knee: float = 1.0, slope: float = 1000.0,
                 sensitivity: float = 2.0, design: str = PCD_DD_DESIGN, **kw):
        super().__init__(epsilon, delta, **kw)
        self.knee, self.slope, self.sensitivity = float(knee), float(slope), float(sensitivity)
        if design not in PCD_DD_DESIGNS:
            raise ValueError(f"design must be one of {sorted(PCD_DD_DESIGNS)}, got {design!r}")
        self.design = design
        self.n0 = PCD_DD_DESIGNS[design]["n0"]

    def embed(self, lo, hi, s):
        lo, hi, s = (np.asarray(a, float) for a in (lo, hi, s))
        if np.any(np.abs(s - self.sensitivity) > 1e-12):
            raise ValueError(f"PCDDDFamily is built for sensitivity {self.sensitivity}")
        half = np.maximum(np.ceil(np.maximum(-lo, hi) + 1e-9), self.n0)  # Φ ⊆ [−n′, n′), n′ integer
        return -half, np.round(2.0 * half / s, 6)

    def query_mechanism(self):
        """The solved mechanism in query units on [−n0, n0) (n0 of the design)."""
        delta = self.delta - DD_WIDE_SLACK
        spec = PCD_DD_DESIGNS[self.design]

        def build():
            e = pcd_dd_edges(self.n0, self.design)
            prob = dd.Problem(epsilon=self.epsilon, delta=delta, sensitivity=self.sensitivity,
                                        loss=coordinate_descent_losses(e, knee=self.knee, slope=self.slope),
                                        phi_lo=float(e[0]), phi_hi=float(e[-1]), pieces=e, weight=equal_mass_weight(e))
            desc = dict(kind="coordinate descent (OPT)", epsilon=self.epsilon, delta=delta,
                        sensitivity=self.sensitivity, loss=f"coordinate_descent_losses(knee={self.knee:g}, slope={self.slope:g})",
                        phi=[float(e[0]), float(e[-1])], piece_edges=e.tolist(), weight="equal mass per piece",
                        partition=dict(L=spec["L"], beta=spec["beta"]))
            return prob, Partition.uniform(L=spec["L"], beta=spec["beta"]), desc

        name = f"pcd_knee={self.knee:g}_slope={self.slope:g}_eps={self.epsilon:g}_delta={self.delta:g}_n0={self.n0:g}"
        if self.design != "seven":
            name += f"_design={self.design}"
        if name not in self._solves:
            mech, info = solve_dd_cached(name, build, cache=self.cache, solve=self.solve)
            self._solves[name], self.solved[name] = mech, info
        return self._solves[name]

    def _build(self, key: float):
        q = self.query_mechanism()
        half = key * self.sensitivity / 2.0
        e = pcd_dd_edges(half, self.design)
        unit = dd.Mechanism(tuple(dilate_noise(nz, 1.0 / self.sensitivity) for nz in q.noises),
                                      (e + half) / self.sensitivity, q.epsilon, self.delta, 1.0)
        d = unit.certify()
        if not d <= unit.delta:  # pragma: no cover
            raise ValueError(f"rescaled mechanism for n = {half} is only ({unit.epsilon}, {d})-DP")
        return unit


class PieceQuantiles:
    """The quantile functions of several piecewise-uniform noises as padded tables: ``ppf(piece, u)`` is
    ``noises[piece[i]].ppf(u[i])`` for every i at once, bit for bit.

    :meth:`dpdro.PiecewiseUniform.ppf` rebuilds its cumulative table on every call; a data-dependent
    mechanism with 42 pieces called once per coordinate update then spends milliseconds per call in
    that bookkeeping. Here the tables are built once (from each noise's own ``_pieces``) and one call
    maps every uniform with array operations: the search ``searchsorted(cum, u, "left") − 1`` becomes
    the count of table entries below u (the same index: the cumulative masses are non-decreasing and
    the last one is 1 > u), the skip of empty cells a precomputed "next cell with mass" table, and the
    interpolation the same floating-point operations in the same order.
    """

    def __init__(self, noises: Sequence[PiecewiseUniform]):
        tables = [nz._pieces() for nz in noises]  # (left ends, widths, masses) of each noise
        P, J = len(tables), max(t[2].size for t in tables)
        self.cum = np.full((P, J + 1), np.inf)  # padding is never below u
        self.left, self.width, self.mass = np.zeros((P, J)), np.zeros((P, J)), np.ones((P, J))
        self.next_mass = np.zeros((P, J), dtype=np.intp)
        self.last = np.empty(P, dtype=np.intp)
        self.top = np.array([float(nz.support[1]) for nz in noises])
        for l, (left, width, mass) in enumerate(tables):
            J_l = mass.size
            cum = np.concatenate(([0.0], np.cumsum(mass)))
            cum[-1] = 1.0
            nz = np.nonzero(mass > 0)[0]
            self.cum[l, :J_l + 1] = cum
            self.left[l, :J_l], self.width[l, :J_l], self.mass[l, :J_l] = left, width, mass
            self.next_mass[l, :J_l] = nz[np.clip(np.searchsorted(nz, np.arange(J_l)), 0, nz.size - 1)]
            self.last[l] = J_l - 1

    def ppf(self, piece: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``noises[piece[i]].ppf(u[i])`` for 1-d integer ``piece`` and ``u`` in [0, 1] of one length."""
        piece, u = np.asarray(piece, dtype=np.intp), np.asarray(u, dtype=float)
        j = np.empty(u.size, dtype=np.intp)
        step = max(1, (1 << 20) // self.cum.shape[1])  # bounded temporary (N, J + 1) comparisons
        for a in range(0, u.size, step):
            b = slice(a, a + step)
            j[b] = np.count_nonzero(self.cum[piece[b]] < u[b, None], axis=1) - 1
        j = self.next_mass[piece, np.clip(j, 0, self.last[piece])]
        frac = np.clip((u - self.cum[piece, j]) / self.mass[piece, j], 0.0, 1.0)
        return np.where(u >= 1.0, self.top[piece], self.left[piece, j] + frac * self.width[piece, j])


class DataDependentNoise:
    """The "(OPT)" column: values + Δf·X(t), X(t) the noise of the piece containing t = (ϕ − φ_lo′)/Δf.

    A mechanism ``mech(values, sensitivity, rng, *, phi_lo, phi_hi)`` (``needs_range = True``: the
    experiment passes the range Φ of each statistic). Vectorised: one uniform per value, drawn in one
    call (common random numbers with the additive mechanisms), then the values are grouped by range key
    and each group's uniforms are mapped through the ``ppf`` of their pieces' noises at once
    (:class:`PieceQuantiles`, built once per key). ``tables=False`` maps them piece by piece through
    ``noises[l].ppf`` instead (the definition; the same numbers, slower).
    """

    needs_range = True

    def __init__(self, family: DDFamily, name: str = "(OPT)", *, tables: bool = True):
        self.family, self.name, self.tables = family, name, bool(tables)
        self._quantiles: dict[float, tuple] = {}  # key -> (mechanism, PieceQuantiles of its noises)

    def _piece_quantiles(self, key: float, mech) -> PieceQuantiles:
        cached = self._quantiles.get(key)
        if cached is None or cached[0] is not mech:
            cached = self._quantiles[key] = (mech, PieceQuantiles(mech.noises))
        return cached[1]

    def unit_noise(self, values, sensitivity, u, *, phi_lo, phi_hi) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        shape = v.shape
        s = np.broadcast_to(np.asarray(sensitivity, dtype=float), shape)
        lo = np.broadcast_to(np.asarray(phi_lo, dtype=float), shape)
        hi = np.broadcast_to(np.asarray(phi_hi, dtype=float), shape)
        if np.any(v < lo - 1e-9 * np.maximum(1.0, np.abs(lo))) or np.any(v > hi + 1e-9 * np.maximum(1.0, np.abs(hi))):
            raise ValueError("a query value lies outside its range [phi_lo, phi_hi]")
        lo2, key = self.family.embed(lo, hi, s)
        key = np.broadcast_to(key, shape)
        t = (v - lo2) / s
        u = np.clip(np.asarray(u, dtype=float), _TINY, 1.0 - _TINY)
        out = np.empty(shape)
        flat_k, flat_t, flat_u, flat_o = key.ravel(), t.ravel(), u.ravel(), out.reshape(-1)
        keys = np.unique(flat_k)
        for k in keys:
            idx = np.nonzero(flat_k == k)[0] if keys.size > 1 else np.arange(flat_k.size)
            mech = self.family.mechanism(k)
            tt = np.clip(flat_t[idx], 0.0, np.nextafter(float(mech.piece_edges[-1]), -np.inf))
            pc = np.atleast_1d(mech.piece(tt))
            if self.tables:
                flat_o[idx] = self._piece_quantiles(float(k), mech).ppf(pc, flat_u[idx])
                continue
            for l in np.unique(pc):
                sel = idx[pc == l]
                flat_o[sel] = mech.noises[l].ppf(flat_u[sel])
        return out

    def __call__(self, values, sensitivity, rng, *, phi_lo, phi_hi):
        v = np.asarray(values, dtype=float)
        u = rng.random(v.shape)
        return v + np.asarray(sensitivity, dtype=float) * self.unit_noise(v, sensitivity, u, phi_lo=phi_lo, phi_hi=phi_hi)


def call_mechanism(mech, values, sensitivity, rng, phi_lo, phi_hi):
    """``mech(values, sensitivity, rng)``, passing the range Φ to mechanisms with ``needs_range``."""
    if getattr(mech, "needs_range", False):
        return mech(values, sensitivity, rng, phi_lo=phi_lo, phi_hi=phi_hi)
    return mech(values, sensitivity, rng)


def make_data_dependent(table: int, epsilon: float = 1.0, delta: float = 0.1, *, cache: str | Path | None = DD_CACHE,
                        solve: bool = True, **kw) -> DataDependentNoise:
    """The (OPT) mechanism of Table 2 (naïve Bayes) or Table 3 (coordinate descent)."""
    if table == 2:
        return DataDependentNoise(NBDDFamily(epsilon, delta, cache=cache, solve=solve))
    if table == 3:
        return DataDependentNoise(PCDDDFamily(epsilon, delta, cache=cache, solve=solve, **kw))
    raise ValueError(f"table must be 2 or 3, got {table!r}")


# ----------------------------------------------------------------------------------------------
# Ledger rows and HTML tables of Tables 2 and 3
# ----------------------------------------------------------------------------------------------

ML_TOLERANCE = dict(error=0.5, Imp=5.0)  # |ours − paper| within which a Table 2/3 value matches (points)

def ml_ledger_rows(chapter: str, table: int, baseline: str, datasets: Sequence[str], offline: Sequence[str],
                   columns: Sequence[str], paper: Mapping, stored: Mapping, scale: Mapping, settings: Callable,
                   opt_design: str, notes: Mapping[str, str]) -> list:
    """One ledger row per (dataset, side, column) of Table 2 or 3: the DP columns, "(OPT)" and "Imp".

    ``paper[name][side][column]`` are the paper's values, ``stored[name]["summary"][side]`` ours
    (:func:`summarize`), ``scale[name]`` the (splits, simulations) they were computed with,
    ``settings(name, side, column, k, m)`` the sentence describing our settings, ``opt_design`` how our
    "(OPT)" is built and ``notes[name]`` how a dataset differs from the paper's. A value within
    :data:`ML_TOLERANCE` of the paper's (0.5 points, 5 for Imp) matches; Imp never matches when the non-private ``baseline`` is
    not better than the best literature mechanism (it then compares gaps of opposite sign). Datasets
    not available offline get "not reproducible here" rows.
    """
    from .ledger import Row, compare

    rows = []
    for name in datasets:
        for side in ("in", "out"):
            loc = f"Table {table}, {name}, {'in-sample' if side == 'in' else 'out-of-sample'}"
            for c in list(columns) + ["(OPT)", "Imp"]:
                rid = f"{chapter}/table{table}/{name}/{side}/{c}"
                qty = "Imp (%)" if c == "Imp" else f"{c} error (%)"
                paper_v = paper[name][side][c]
                if name not in offline:
                    rows.append(Row(id=rid, chapter=chapter, location=loc, quantity=qty, paper=paper_v, ours=None,
                                    status="not reproducible here", scale="ci",
                                    explanation=f"dataset {name} is not available offline (data/README.md)"))
                    continue
                s = stored[name]["summary"][side]
                if c not in s["errors"] and c != "Imp":
                    continue
                ours = s["imp"] if c == "Imp" else s["errors"][c]
                if ours is None or not np.isfinite(ours):
                    continue
                k, m = scale[name]
                status = compare(paper_v, round(ours, 4), abs_tol=ML_TOLERANCE["Imp" if c == "Imp" else "error"])
                expl = ""
                if c == "Imp" and s["errors"][baseline] >= s["errors"][s["best_literature"]]:
                    status = "differs"  # Imp compares gaps of opposite sign: not meaningful, never a match
                    expl = f"{baseline} is not better than the best literature mechanism here, so Imp has no meaning; "
                expl += settings(name, side, c, k, m)
                if c == "(OPT)":
                    expl += "; " + opt_design
                if name in notes:
                    expl += f"; {notes[name]}"
                rows.append(Row(id=rid, chapter=chapter, location=loc, quantity=qty, paper=paper_v, ours=round(ours, 4),
                                status=status, scale="paper" if (k, m) == (100, 1000) else "reduced",
                                explanation=expl))
    return rows


_ML_TABLE_STYLE = """<style>
table.ml-comparison {border-collapse: collapse; font-size: 0.8em; margin-bottom: 0.3em}
table.ml-comparison th, table.ml-comparison td {padding: 1px 5px; text-align: right}
table.ml-comparison th {text-align: center}
table.ml-comparison td.name {text-align: left}
table.ml-comparison td.scale {white-space: nowrap}
table.ml-comparison td.paper, table.ml-comparison td.na {color: #666}
table.ml-comparison .ok {background: #d8f0d8}
table.ml-comparison .near {background: #fbefc4}
table.ml-comparison .far {background: #f6d2d2}
</style>"""


def ml_comparison_html(side: str, datasets: Sequence[str], columns: Sequence[str], paper: Mapping,
                       stored: Mapping, scale: Mapping, *, caption: str = "") -> str:
    """Table 2 or 3 as an HTML table: per column our value next to the paper's, our cell coloured by
    the deviation |ours − paper| (green within :data:`ML_TOLERANCE`, amber within four times it, red
    beyond; the exact deviation in the cell's tooltip), then the one-sided paired t-test p of OPT
    against the best literature mechanism.

    ``columns`` are the error columns (the DP mechanisms and the non-private baseline); "(OPT)" and
    "Imp" are appended. ``paper[name][side]``, ``stored[name]["summary"][side]`` and ``scale[name]``
    (splits, simulations) as in :func:`ml_ledger_rows`; a dataset absent from ``stored`` shows the
    paper's values only ("not offline").
    """
    import html

    cols = [*columns, "(OPT)", "Imp"]
    head = ["<th rowspan=2>dataset</th>", "<th rowspan=2>splits × sims</th>",
            *(f"<th colspan=2>{html.escape(c)}</th>" for c in cols), "<th rowspan=2>p</th>"]
    lines = [_ML_TABLE_STYLE, '<table class="ml-comparison">']
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines += ["<thead>", "<tr>", *head, "</tr>", "<tr>", *("<th>ours</th><th>paper</th>" for _ in cols),
              "</tr>", "</thead>", "<tbody>"]
    for name in datasets:
        P = paper[name][side]
        lines += ["<tr>", f'<td class="name">{html.escape(name)}</td>']
        if name not in stored:
            lines.append('<td class="na">not offline</td>')
            for c in cols:
                lines.append(f'<td class="na">—</td><td class="paper">{P[c]:.{1 if c == "Imp" else 2}f}</td>')
            lines += ["<td></td>", "</tr>"]
            continue
        s = stored[name]["summary"][side]
        k, m = scale[name]
        lines.append(f'<td class="scale">{k}×{m}</td>')
        for c in cols:
            ours = s.get("imp") if c == "Imp" else s["errors"].get(c)
            digits = 1 if c == "Imp" else 2
            if ours is None or not np.isfinite(ours):
                cell = '<td class="na">—</td>'
            else:
                tol = ML_TOLERANCE["Imp" if c == "Imp" else "error"]
                dev = abs(ours - P[c])
                kind = "ok" if dev <= tol else "near" if dev <= 4 * tol else "far"
                cell = f'<td class="{kind}" title="ours − paper: {ours - P[c]:+.{digits}f}">{ours:.{digits}f}</td>'
            lines.append(cell + f'<td class="paper">{P[c]:.{digits}f}</td>')
        lines += [f"<td>{s['p']:.1e}</td>", "</tr>"]
    tol = ML_TOLERANCE
    lines += ["</tbody>", "</table>",
              f'<p style="font-size:0.8em">Our cell coloured by |ours − paper|: <span class="ok">≤ '
              f"{tol['error']:g}</span>, <span class=\"near\">≤ {4 * tol['error']:g}</span>, "
              f"<span class=\"far\">more</span> points (Imp: ≤ {tol['Imp']:g}, ≤ {4 * tol['Imp']:g}); "
              "p: one-sided paired t-test of OPT against the best literature mechanism.</p>"]
    return "\n".join(lines)
