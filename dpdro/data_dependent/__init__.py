r"""Data-dependent noise (Section 3, Appendix C.3 and the GitHub appendices of the paper).

One namespace that mirrors the data-independent API::

    from dpdro import data_dependent as dd
    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=6, beta=0.5))   # ub.mechanism: a dd.Mechanism
    lb = dd.lower_bound(prob, dpdro.Partition.uniform(L=6, beta=0.5))
    dd.certify_delta(ub.mechanism.noises, ub.mechanism.piece_edges, epsilon=1.0, sensitivity=2.0)

Modules: :mod:`~dpdro.data_dependent.problem` (the problem P′ and its pieces),
:mod:`~dpdro.data_dependent.lp` (the bounding LPs P′(π, β) and D′(π, β)),
:mod:`~dpdro.data_dependent.bounds` (solving them and releasing a certified mechanism),
:mod:`~dpdro.data_dependent.oracle` (Algorithms 3 and G.1), :mod:`~dpdro.data_dependent.privacy`
(exact certificates of a family of noises) and :mod:`~dpdro.data_dependent.mechanism` (the released
mechanism).

The noise may depend on the query output ϕ ∈ Φ = [phi_lo, phi_hi). Problem P′ (Observation 2) is

    minimise ∫_Φ w(ϕ)·E_{γ(·|ϕ)} c(X) dϕ   s.t.   γ(A | ϕ) ≤ e^ε γ(A − φ | ϕ + φ) + δ
    for all ϕ ∈ Φ, |φ| ≤ Δf with ϕ + φ ∈ Φ, and all events A.

Here w is normalised to a probability density on Φ, so every objective is the w-average of the
per-piece expected losses and is directly comparable with the data-independent P.

Pieces of Φ
    Φ is cut into K = |Φ|/β *fine pieces* Φ_k(β) of width β (Section 3.2). The released mechanism
    uses one noise per *piece* Λ_l, a union of consecutive fine pieces given by the index vector λ of
    Algorithm G.1 (``pieces=None``: every fine piece is a piece, the paper's uniform Φ_k(β);
    ``pieces=M``: M equal pieces; ``pieces=[e_0, …, e_M]``: arbitrary piece edges on the β-grid).

Upper bound P′(π, β) (Appendix C.3 with the grouping of Algorithm G.1)
    One distribution p_l on the cells Π_j(β) per piece, objective Σ_l ω_l Σ_j c_j p_l(j) with
    ω_l = ∫_{Λ_l} w, and for every ordered pair of pieces (l, l′) the privacy constraints of
    equation (9) between p_l and p_l′ for every shift φ = sβ with
    s ∈ {λ_{l′} − λ_{l+1}, …, λ_{l′+1} − λ_l} ∩ [−Δf/β, Δf/β] (Algorithm G.1; for single fine pieces
    this is {m − k − 1, m − k, m − k + 1}, Algorithm 3). Since δ(φ) is continuous and piecewise affine
    in φ with breakpoints on the β-grid, these closure points cover every admissible φ.

Lower bound D′(π, β) (Proposition 7, in primal form)
    ``grouped=False`` (default, a lower bound on P′ itself): one distribution per *fine* piece on the
    padded cells of D(π, β), objective coefficients w̲_k·β·c̲_j with w̲_k = inf_{Φ_k} w and c̲_j the
    cell infima, and privacy constraints between p_k and p_{k+s} for the *exact* shift sβ only. Why:
    for any γ feasible in P′, the averages p_k = β⁻¹∫_{Φ_k} γ(·|ϕ) dϕ satisfy exactly these
    constraints (average the constraint over ϕ ∈ Φ_k with ϕ + sβ ∈ Φ_{k+s}) and cost at most the
    objective of γ. This is the shift set E′_k(L, β) = B(β) ∩ (Φ − inf Φ_k) of Proposition 7; the
    statement of D′(π, β) in Appendix C.3 lists the larger set E′_km (shifts m − k ± 1), which the
    averaging argument does not justify, so dpdro uses the smaller, certainly valid set.
    The noise partition must be uniform (cells of width β): on wider cells these segment
    constraints are not a relaxation (see :func:`dpdro.lower_bound`), and a ValueError says so.
    ``grouped=True``: a lower bound on the best mechanism that is constant on the given pieces (the
    problem that P′(π, β) with the grouping λ restricts): one distribution per piece, weights ω_l, and
    the shifts strictly inside (λ_{l′} − λ_{l+1}, λ_{l′+1} − λ_l). With one piece of width ≥ Δf + β
    this is exactly the data-independent D(π, β).

Everything else is shared with the data-independent code: the segment tables of
:mod:`dpdro.oracle` (one per shift, reused by every pair of pieces), whole-shift cuts with auxiliary
t-columns and a budget row per (pair, shift), the incremental HiGHS model, Algorithm 1
(:func:`dpdro.cutting_plane.run_cutting_plane`), a dual-feasible safe lower bound, and an exact
certificate of the released family (:func:`certify_delta`) with repair by mixing.
"""


from .bounds import LowerBound, UpperBound, lower_bound, upper_bound
from .mechanism import Mechanism
from .oracle import Shortfall, max_privacy_shortfall
from .privacy import PrivacyProfile, certify_delta, privacy_profile
from .problem import Problem

__all__ = [
    "LowerBound",
    "Mechanism",
    "PrivacyProfile",
    "Problem",
    "Shortfall",
    "UpperBound",
    "certify_delta",
    "lower_bound",
    "max_privacy_shortfall",
    "privacy_profile",
    "upper_bound",
]
