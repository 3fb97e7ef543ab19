r"""Data-dependent noise (Section 3, Appendix C.3 and the GitHub appendices of the paper).

One namespace that mirrors the data-independent API::

    from dpdro import data_dependent as dd
    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=6, beta=0.5))  # ub.mechanism
    lb = dd.lower_bound(prob, dpdro.Partition.uniform(L=6, beta=0.5))
    dd.certify_delta(ub.mechanism.noises, ub.mechanism.piece_edges, epsilon=1.0, sensitivity=2.0)

Modules: :mod:`~dpdro.data_dependent.problem` (the problem P′ and its pieces),
:mod:`~dpdro.data_dependent.lp` (the bounding LPs P′(π, β), D′(π, β) and D′_R(L, β)),
:mod:`~dpdro.data_dependent.bounds` (solving them and releasing a certified mechanism),
:mod:`~dpdro.data_dependent.optimal` (:func:`optimal_noise`, the driver that refines β until a
target gap or a time limit), :mod:`~dpdro.data_dependent.oracle` (Algorithms 3 and G.1),
:mod:`~dpdro.data_dependent.privacy` (exact certificates of both kinds of mechanism),
:mod:`~dpdro.data_dependent.mechanism` (the released mechanism, of kind "noise" or "output"),
:mod:`~dpdro.data_dependent.output` (the output family, a second restriction of P′ with one output
law per piece, on cells or on the grid points, and the clamped D′_R in output coordinates),
:mod:`~dpdro.data_dependent.costs`
(their exact objective coefficients) and :mod:`~dpdro.data_dependent.anchors` (the constant
mechanism and the clamped data-independent noise).

The noise may depend on the query output ϕ ∈ Φ = [phi_lo, phi_hi). Problem P′ (Observation 2) is

    minimise ∫_Φ w(ϕ)·E_{γ(·|ϕ)} c(X) dϕ   s.t.   γ(A | ϕ) ≤ e^ε γ(A − φ | ϕ + φ) + δ
    for all ϕ ∈ Φ, |φ| ≤ Δf with ϕ + φ ∈ Φ, and all events A.

Here w is normalised to a probability density on Φ, so every objective is the w-average of the
per-piece expected losses and is directly comparable with the data-independent P.

Pieces of Φ
    Φ is cut into K = |Φ|/β *fine pieces* Φ_k(β) of width β (Section 3.2). The released mechanism
    uses one noise per *piece* Λ_l, a union of consecutive fine pieces given by the index vector λ
    of Algorithm G.1 (``pieces=None``: every fine piece is a piece, the paper's uniform Φ_k(β);
    ``pieces=M``: M equal pieces; ``pieces=[e_0, …, e_M]``: arbitrary piece edges on the β-grid).

Upper bound P′(π, β) (Appendix C.3 with the grouping of Algorithm G.1)
    One distribution p_l on the cells Π_j(β) per piece, objective Σ_l ω_l Σ_j c_j p_l(j) with
    ω_l = ∫_{Λ_l} w, and for every ordered pair of pieces (l, l′) the privacy constraints of
    equation (9) between p_l and p_l′ for every shift φ = sβ with
    s ∈ {λ_{l′} − λ_{l+1}, …, λ_{l′+1} − λ_l} ∩ [−Δf/β, Δf/β] (Algorithm G.1; for single fine pieces
    this is {m − k − 1, m − k, m − k + 1}, Algorithm 3). Since δ(φ) is continuous and piecewise
    affine in φ with breakpoints on the β-grid, these closure points cover every admissible φ.

    ``upper_bound(..., centred=True)`` translates the whole family by −β/2 (cells centred on the
    grid points iβ): privacy only involves differences of noise positions, so only the costs change.

Lower bound D′(π, β) (Proposition 7, in primal form)
    ``grouped=False`` (default, a lower bound on P′ itself): one distribution per *fine* piece on
    the padded cells of D(π, β), objective coefficients w̲_k·β·c̲_j with w̲_k = inf_{Φ_k} w and
    c̲_j the cell infima, and privacy constraints between p_k and p_{k+s} for the *exact* shift sβ
    only. Why: for any γ feasible in P′, the averages p_k = β⁻¹∫_{Φ_k} γ(·|ϕ) dϕ satisfy exactly
    these constraints (average the constraint over ϕ ∈ Φ_k with ϕ + sβ ∈ Φ_{k+s}) and cost at most
    the objective of γ. This is the shift set E′_k(L, β) = B(β) ∩ (Φ − inf Φ_k) of Proposition 7;
    the statement of D′(π, β) in Appendix C.3 lists the larger set E′_km (shifts m − k ± 1), which
    the averaging argument does not justify, so dpdro uses the smaller, certainly valid set.
    The noise partition must be uniform (cells of width β): on wider cells these segment
    constraints are not a relaxation (see :func:`dpdro.lower_bound`), and a ValueError says so.
    ``grouped=True``: a lower bound on the best mechanism that is constant on the given pieces (the
    problem that P′(π, β) with the grouping λ restricts): one distribution per piece, weights ω_l,
    and the shifts strictly inside (λ_{l′} − λ_{l+1}, λ_{l′+1} − λ_l). With one piece of width ≥ Δf
    + β this is exactly the data-independent D(π, β).

Lower bound D′_R(L, β) (randomized rounding; the default of :func:`lower_bound` where it applies)
    The data-independent argument of :mod:`dpdro.grid` carries over, with the rounding grid moving
    with the query value. Write Φ_k(β) = [a_k, a_k + β), a_k = phi_lo + kβ, k = 0 … K−1, and for
    θ ∈ [0, β) let ϕ_k(θ) = a_k + θ: the points of Φ with the *same offset* θ in their fine piece.
    R(x) = β⌊x/β + U⌋ with U ~ U[0, 1) is the randomized rounding of the noise to βℤ.

    Claim. For γ feasible in P′ let r_k^θ be the law of R(X), X ~ γ(·|ϕ_k(θ)), and r̄_k = β⁻¹∫_0^β
    r_k^θ dθ. Then (a) r̄_k(A) ≤ e^ε r̄_{k+s}(A − sβ) + δ for every set A of grid points and every
    s ≠ 0 with |s|β ≤ Δf and 0 ≤ k + s < K, and (b) ∫_Φ w(ϕ) E_{γ(·|ϕ)} c dϕ ≥ Σ_k β w̲_k (Σ_i
    r̄_k(i) c(iβ) − e_β), where w̲_k = inf_{Φ_k} w and e_β = sup_x (Îc − c)(x) ≥ 0, Îc the linear
    interpolant of c on βℤ (:meth:`dpdro.Loss.grid_interpolation_excess`; 0 for ℓ1, β²/4 for ℓ2).
    Hence the LP

        minimise Σ_k β w̲_k Σ_i c(iβ) r_k(i) − Σ_k β w̲_k e_β   over probabilities r_k on βℤ with
        (a)

    is a lower bound on P′, and so is any relaxation of it.

    Proof. (a) ϕ = ϕ_k(θ) and ϕ′ = ϕ_{k+s}(θ) = ϕ + sβ both lie in Φ and |ϕ′ − ϕ| ≤ Δf, so the
    outputs Y = ϕ + X and Y′ = ϕ′ + X′ (X′ ~ γ(·|ϕ′)) are (ε, δ)-indistinguishable. Post-processing
    by any Markov kernel fixed for this pair preserves that (∫ f dP ≤ e^ε ∫ f dQ + δ for f ∈ [0, 1]
    follows from the event inequalities by the layer-cake formula). Take T(y) = ϕ + R(y − ϕ):
    randomized rounding of the *output* to the grid ϕ + βℤ = a_0 + θ + βℤ, which contains ϕ_m(θ)
    for every m. T(Y) − ϕ = R(X) ~ r_k^θ, and T(Y′) − ϕ = R(X′ + sβ) = R(X′) + sβ (rounding
    commutes with grid shifts), whose law is r_{k+s}^θ moved by sβ. So r_k^θ(A) ≤ e^ε r_{k+s}^θ(A −
    sβ) + δ for every θ, and integrating over θ (the constraint is linear with a constant
    right-hand side; θ ↦ r_k^θ is measurable because γ is a Markov kernel) gives (a). (b) Given X =
    x ∈ [iβ, (i+1)β), R(x) takes the values iβ and (i+1)β with mean x, so E[c(R(X)) | X] = Îc(X) ≤
    c(X) + e_β and E c(X) ≥ Σ_i r_k^θ(i) c(iβ) − e_β. As E c(X) ≥ 0 and w ≥ w̲_k ≥ 0 on Φ_k,
    ∫_{Φ_k} w(ϕ) E_{γ(·|ϕ)} c dϕ = ∫_0^β w(ϕ_k(θ)) E c dθ ≥ w̲_k ∫_0^β (Σ_i r_k^θ(i) c(iβ) − e_β)
    dθ, which is β w̲_k (Σ_i r̄_k(i) c(iβ) − e_β); sum over k. ∎

    Why the grid moves with ϕ: a single output grid for all ϕ would put the kink of c(· − ϕ) between
    grid points and cost up to β/2 for ℓ1 (β/3 on average over θ); with the grid ϕ + βℤ the noise is
    rounded on βℤ ∋ 0 and no infimum over ϕ ∈ Φ_k is needed in the loss coefficients (only in w).
    The shifts are exactly the grid shifts sβ: a shift φ = (s + τ)β off the grid pairs offset θ with
    offset θ + τβ, a different rounding grid; its constraint between averaged laws is in any case a
    convex combination of those of s and s + 1, so nothing is lost.

    Finite LP. Only the events inside the core points −L … L are kept (dropping constraints
    relaxes), the variables are r_k(i) for the padded points (i within Δf/β of the core) and one
    column for the mass beyond them at cost inf of c there (:meth:`dpdro.Loss.tail_infimum`, at
    most the cost of any such point). On uniform cells of width β this is the LP of D′(L, β) above
    with cell I_i read as the grid point iβ and its cost inf_{I_i} c replaced by c(iβ) (the same
    rows, the same shifts, the same padding); the excess is subtracted after the safe dual bound,
    rounded up. For ℓ1, c(iβ) ≥ inf_{I_i} c and e_β = 0, so D′_R ≥ D′ on every instance; for ℓ2
    (e_β = β²/4) neither dominates and :func:`lower_bound` solves both and returns the larger.

    Variants. ``grouped=True`` (a mechanism constant on the pieces Λ_l): the same rounding of the
    noise X_l in noise space (post-processing of the pair (ϕ, ϕ + sβ) by x ↦ R(x − ϕ)) gives the
    constraints of the strictly interior grid shifts, with the weights ω_l. Monotone problems: the
    rounded law of a monotone noise need not be monotone, so D′_R drops the monotonicity rows (a
    lower bound on a smaller optimum) and :func:`lower_bound` also solves D′ with them. Caps: the
    rounded laws satisfy E c_cap(R(X)) ≤ cap + e_β(c_cap). Losses without a finite excess (|x|^k,
    k > 2) use D′ alone.

Everything else is shared with the data-independent code: the segment tables of
:mod:`dpdro.oracle` (one per shift, reused by every pair of pieces), whole-shift cuts with auxiliary
t-columns and a budget row per (pair, shift), the incremental HiGHS model, Algorithm 1
(:func:`dpdro.cutting_plane.run_cutting_plane`), a dual-feasible safe lower bound, and an exact
certificate of the released family (:func:`certify_delta`) with repair by mixing.
"""


from .bounds import LowerBound, UpperBound, lower_bound, upper_bound
from .mechanism import Mechanism
from .optimal import DDOptimalNoise, optimal_noise
from .oracle import Shortfall, max_privacy_shortfall
from .privacy import PrivacyProfile, certify_delta, privacy_profile
from .problem import Problem

__all__ = [
    "DDOptimalNoise",
    "LowerBound",
    "Mechanism",
    "PrivacyProfile",
    "Problem",
    "Shortfall",
    "UpperBound",
    "certify_delta",
    "lower_bound",
    "max_privacy_shortfall",
    "optimal_noise",
    "privacy_profile",
    "upper_bound",
]
