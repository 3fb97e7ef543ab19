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
``ppf`` (``dpdro.benchmarks.Gaussian/AnalyticGaussian/TruncatedLaplace`` or the ``PiecewiseUniform``
returned by :func:`dpdro.optimal_noise`) and adds ``sensitivity · ppf(U)``. Scaling a unit noise by Δf is
exact for all four: the Gaussian and truncated Laplace calibrations are linear in Δf, and for the
positively homogeneous ℓ1 loss, X is optimal for Δf = 1 iff Δf·X is optimal for Δf (a change of
variables in the DRO problem). A data-dependent mechanism (the paper's "(OPT)" column) plugs in the same
way: it receives the true values and may choose its noise from them (see :class:`NoiseMechanism`).

Common random numbers: all mechanisms of one simulation draw their uniforms from identically seeded
generators (and the coordinate descent shares its initial points and coordinate orders), so paired
differences between mechanisms have little simulation noise. Simulations are vectorised with numpy:
a block of simulations is one array operation; the only Python loops run over splits, over blocks of
simulations (memory) and over the T·K sequential coordinate updates.

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
  :func:`dpdro.datasets.one_hot` (the authors' centring and scaling on the full dataset).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np
from scipy import sparse, stats

from .benchmarks import AnalyticGaussian, Gaussian, TruncatedLaplace
from .datasets import Dataset, one_hot

__all__ = [
    "AdditiveNoise",
    "NoiseMechanism",
    "NonPrivate",
    "NBSettings",
    "NBStats",
    "PCDSettings",
    "PENDING_DATA_DEPENDENT",
    "improvement",
    "make_mechanisms",
    "nb_errors",
    "nb_noisy_stats",
    "nb_sensitivities",
    "nb_statistics",
    "optimized_unit_noise",
    "paired_one_sided_ttest",
    "pcd_errors",
    "pcd_train",
    "run_naive_bayes",
    "run_pcd",
    "split_indices",
    "summarize",
]

PENDING_DATA_DEPENDENT = "pending: data-dependent mechanism (issue 3)"
MECHANISM_ORDER = ("GN", "AG", "TLN", "OPT")
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
    from .noise import PiecewiseUniform
    from .optimal import optimal_noise
    from .privacy import certify_delta
    from .problem import Problem

    if cache is not None and Path(cache).is_file():
        data = json.loads(Path(cache).read_text())
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
            Path(cache).parent.mkdir(parents=True, exist_ok=True)
            Path(cache).write_text(json.dumps({"noise": noise.to_dict(), "info": info}, indent=1))
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
    """
    S = int(n_sims)
    s_mean, s_sd = nb_sensitivities(ds, st.prior, settings)
    prior = mech(np.broadcast_to(st.prior, (S,) + st.prior.shape), 1.0, rng)
    counts = mech(np.broadcast_to(st.counts, (S,) + st.counts.shape), 1.0, rng)
    means = mech(np.broadcast_to(st.means, (S,) + st.means.shape), s_mean, rng)
    sds = mech(np.broadcast_to(st.sds, (S,) + st.sds.shape), s_sd, rng)
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
                    settings: NBSettings = NBSettings()) -> dict:
    """DP naïve Bayes on ``n_splits`` random 80/20 splits × ``n_sims`` noise simulations per mechanism.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}``: per split, the error averaged over the
    simulations; ``"NB"`` is the non-private classifier (same floors). Seeds: the split and the noise
    of split k come from ``SeedSequence([seed, k])``; every mechanism gets the same noise seed.
    """
    res = {"in": {m: np.empty(n_splits) for m in [*mechanisms, "NB"]},
           "out": {m: np.empty(n_splits) for m in [*mechanisms, "NB"]}}
    for k in range(n_splits):
        s_split, s_noise, _ = _seeds(seed, k)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        st = nb_statistics(ds, train)
        for name, mech in [*mechanisms.items(), ("NB", NonPrivate())]:
            sims = 1 if name == "NB" else n_sims
            noisy = nb_noisy_stats(ds, st, mech, sims, np.random.default_rng(s_noise), settings)
            res["in"][name][k] = nb_errors(ds, train, noisy).mean()
            res["out"][name][k] = nb_errors(ds, test, noisy).mean()
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
              rng_noise: np.random.Generator, settings: PCDSettings = PCDSettings(), record_queries: bool = False):
    """Run ``n_sims`` DP proximal coordinate descents at once; returns the last iterates H (S, d)
    (and, if ``record_queries``, the true query values (T·K, S) before noise).

    Per iteration t: each simulation draws its own K coordinates without replacement; update k of
    simulation s perturbs q = Σ_i σ(−y_i m_i)(−y_i x_{i,l}) (m the margins, exact by incremental update)
    with ``mech(q, sensitivity, rng_noise)`` and sets h_l ← prox_{ηλ|·|}(h_l − η·q̃/n); h^t is the
    average of the K inner iterates. ``rng_init`` draws the initial points (uniform on [−1, 1]^d) and the
    coordinate orders, so identically seeded generators give every mechanism the same ones.
    """
    n, d = X.shape
    S = int(n_sims)
    K = settings.K if settings.K is not None else int(math.ceil(d / 4))
    eta, lam = settings.step, settings.lam
    H = (rng_init.random((S, d)) - 0.5) * 2.0
    YX = np.ascontiguousarray(X.T * y.astype(float)[None, :])  # (d, n): row l holds y_i x_il
    rows = np.arange(S)
    queries = [] if record_queries else None
    w = np.empty((S, n))
    for _t in range(settings.T):
        order = np.argsort(rng_init.random((S, d)), axis=1)[:, :K]  # K distinct coordinates per sim
        M = H @ YX  # margins y_i h^T x_i, (S, n)
        Hsum = np.zeros_like(H)
        for k in range(K):
            j = order[:, k]
            YXj = YX[j]  # (S, n)
            np.multiply(M, 0.5, out=w)
            np.tanh(w, out=w)
            w -= 1.0
            w *= -0.5  # sigmoid(-M) = (1 - tanh(M/2))/2, overflow free
            q = -np.einsum("sn,sn->s", w, YXj)
            if record_queries:
                queries.append(q.copy())
            qn = mech(q, settings.sensitivity, rng_noise)
            old = H[rows, j]
            z = old - eta * qn / n
            new = np.sign(z) * np.maximum(np.abs(z) - eta * lam, 0.0)
            H[rows, j] = new
            YXj *= (new - old)[:, None]
            M += YXj
            Hsum += H
        H = Hsum / K
    if record_queries:
        return H, np.asarray(queries)
    return H


def pcd_errors(H: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Misclassification rate (S,) of the hyperplanes H (S, d): predict +1 iff h^⊤x ≥ 0."""
    pred = np.where(X @ H.T >= 0.0, 1, -1)  # (n, S)
    return np.mean(pred != y[:, None], axis=0)


def run_pcd(ds: Dataset, mechanisms: Mapping[str, Callable], *, n_splits: int, n_sims: int, seed: int = 0,
            settings: PCDSettings = PCDSettings(), design=None, nonprivate_sims: int | None = None) -> dict:
    """DP proximal coordinate descent on ``n_splits`` random 80/20 splits × ``n_sims`` simulations.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}`` (errors of the last iterate averaged over the
    simulations); ``"PCD"`` is the non-private method (random too: initial point and coordinates) run
    with ``nonprivate_sims`` (default ``n_sims``) simulations. ``design`` defaults to ``one_hot(ds)``.
    """
    design = one_hot(ds) if design is None else design
    X, y = design.X, design.y
    names = [*mechanisms, "PCD"]
    res = {"in": {m: np.empty(n_splits) for m in names}, "out": {m: np.empty(n_splits) for m in names}}
    for k in range(n_splits):
        s_split, s_noise, s_init = _seeds(seed, k)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        for name, mech in [*mechanisms.items(), ("PCD", NonPrivate("PCD"))]:
            sims = (nonprivate_sims or n_sims) if name == "PCD" else n_sims
            H = pcd_train(X[train], y[train], mech, sims, np.random.default_rng(s_init),
                          np.random.default_rng(s_noise), settings)
            res["in"][name][k] = pcd_errors(H, X[train], y[train]).mean()
            res["out"][name][k] = pcd_errors(H, X[test], y[test]).mean()
    return res


# ----------------------------------------------------------------------------------------------
# Summaries
# ----------------------------------------------------------------------------------------------


def summarize(res: Mapping, *, baseline: str, ours: str = "OPT", literature: Sequence[str] = ("GN", "AG", "TLN")) -> dict:
    """Table row from :func:`run_naive_bayes` / :func:`run_pcd` output: mean errors (%), Imp (%),
    the best literature mechanism, and the one-sided paired t-test of ``ours`` against it (per sample)."""
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
        out[side] = row
    return out


# ----------------------------------------------------------------------------------------------
# Stored results (scripts/run_ml_experiments.py) and the paper's tables
# ----------------------------------------------------------------------------------------------

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results" / "ml"


def paper_tables(path: str | Path | None = None) -> dict:
    """The paper's Tables 2 and 3 as typed in ``results/ml/paper_tables.json`` (PAPER data, not computed)."""
    return json.loads(Path(path or RESULTS_DIR / "paper_tables.json").read_text())


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
