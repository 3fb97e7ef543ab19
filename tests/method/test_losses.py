"""Cell averages (upper-bound coefficients) and cell infima (lower-bound coefficients)."""

import math

import numpy as np
import pytest
from scipy import integrate

import dpdro

LOSSES = [
    dpdro.make_loss("l1"),
    dpdro.make_loss("l2"),
    dpdro.PowerLoss(0.5),
    dpdro.PowerLoss(3.0),
    dpdro.Pinball(0.2),
    dpdro.asymmetric_loss(),
    dpdro.PiecewiseLinear([-1.0, 0.0, 2.0], [1.0, 0.0, 3.0], left_slope=-2.0, right_slope=0.5),
    dpdro.CallableLoss(lambda x: np.log1p(np.abs(x)) + 0.1 * x * x, name="log1p+quad"),
]
CELLS = np.array(
    [
        (-3.0, -2.5),
        (-0.3, 0.2),
        (0.0, 0.125),
        (-1.0, 0.0),
        (0.7, 2.9),
        (1000.0, 1000.001),
        (-5.0, 5.0),
        (1.0, 1.0 + 1e-9),
    ]
)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda piece: piece.name)
def test_cell_average_matches_quadrature(loss):
    a, b = CELLS[:, 0], CELLS[:, 1]
    got = loss.cell_average(a, b)
    for (lo, hi), g in zip(CELLS, got, strict=False):
        ref = integrate.quad(
            lambda x: float(loss(x)),
            lo,
            hi,
            points=[0.0] if lo < 0 < hi else None,
            epsabs=1e-14,
            epsrel=1e-13,
            limit=200,
        )[0] / (hi - lo)
        assert g == pytest.approx(ref, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda piece: piece.name)
def test_cell_infimum_is_a_lower_bound_and_tight(loss):
    a, b = CELLS[:, 0], CELLS[:, 1]
    got = loss.cell_infimum(a, b)
    avg = loss.cell_average(a, b)
    for (lo, hi), g, m in zip(CELLS, got, avg, strict=False):
        dense = loss(np.linspace(lo, hi, 20001)).min()
        assert g <= dense + 1e-12
        assert g == pytest.approx(dense, rel=1e-6, abs=1e-9)
        assert g <= m + 1e-12


def test_closed_forms():
    l1, l2 = dpdro.make_loss("l1"), dpdro.make_loss("l2")
    assert l1.cell_average(-1.0, 3.0) == pytest.approx((1 + 9) / 8)
    assert l1.cell_average(2.0, 4.0) == pytest.approx(3.0)
    assert l2.cell_average(-1.0, 1.0) == pytest.approx(1 / 3)
    assert l2.cell_average(1.0, 2.0) == pytest.approx(7 / 3)
    assert l1.cell_infimum(-1.0, 3.0) == 0.0 and l1.cell_infimum(-3.0, -1.0) == 1.0
    assert dpdro.Pinball(0.25)(np.array([-4.0, 4.0])).tolist() == [3.0, 1.0]
    assert dpdro.asymmetric_loss()(np.array([-1.0, 1.0])).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("loss", LOSSES, ids=lambda piece: piece.name)
def test_tail_infimum(loss):
    a, b = -2.0, 3.0
    xs = np.concatenate((np.linspace(-200, a, 40001), np.linspace(b, 200, 40001)))
    assert loss.tail_infimum(a, b) == pytest.approx(loss(xs).min(), rel=1e-9, abs=1e-12)


def test_callable_with_lipschitz_constant_is_rigorous():
    loss = dpdro.CallableLoss(
        lambda x: np.abs(x) + 0.3 * np.cos(7 * x) + 0.3,
        lipschitz=3.2,
        tail_infimum=lambda a, b: 0.0,
    )
    a = np.linspace(-3, 3, 61)
    got = loss.cell_infimum(a[:-1], a[1:])
    for lo, hi, g in zip(a[:-1], a[1:], got, strict=False):
        assert g <= loss(np.linspace(lo, hi, 5001)).min() + 1e-15


def test_make_loss_roundtrip():
    l1 = dpdro.make_loss("l1")
    assert dpdro.make_loss(l1) is l1
    assert dpdro.make_loss("L2").name == "l2"
    cl = dpdro.make_loss(lambda x: np.abs(x) ** 1.5)
    assert isinstance(cl, dpdro.CallableLoss)
    assert cl.cell_average(0.0, 1.0) == pytest.approx(1 / 2.5, rel=1e-9)


def _interpolation_excess_numeric(loss, beta, lo=-6.0, hi=6.0, per_cell=400):
    """sup (Îc − c) on [lo, hi] by dense evaluation, Îc the linear interpolation on the grid βℤ."""
    x = np.linspace(lo, hi, int(round((hi - lo) / beta)) * per_cell + 1)
    a = np.floor(x / beta) * beta
    t = (x - a) / beta
    return float(np.max((1 - t) * loss(a) + t * loss(a + beta) - loss(x)))


@pytest.mark.parametrize(
    "loss, beta",
    [
        (dpdro.make_loss("l1"), 0.25),
        (dpdro.make_loss("l2"), 0.25),
        (dpdro.make_loss("l2"), 1 / 3),
        (dpdro.PowerLoss(0.5), 0.5),
        (dpdro.PowerLoss(1.5), 0.25),
        (dpdro.Pinball(0.2), 0.25),
        (dpdro.asymmetric_loss(), 0.1),
        (
            dpdro.PiecewiseLinear(
                [-1.0, 0.0, 2.0], [1.0, 0.0, 3.0], left_slope=-2.0, right_slope=0.5
            ),
            0.25,
        ),  # knots on the grid
        (
            dpdro.PiecewiseLinear(
                [-0.9, 0.1, 2.0], [1.0, 0.0, 3.0], left_slope=-2.0, right_slope=0.5
            ),
            0.25,
        ),  # knots off the grid
    ],
    ids=lambda v: v.name if isinstance(v, dpdro.Loss) else f"beta={v:.3g}",
)
def test_grid_interpolation_excess_matches_dense_evaluation(loss, beta):
    """The randomized-rounding lower bound subtracts sup(Îc − c): closed forms against a dense
    scan."""
    e = loss.grid_interpolation_excess(beta)
    numeric = _interpolation_excess_numeric(loss, beta)
    assert e >= numeric - 1e-12  # never too small (the bound would be invalid)
    assert e == pytest.approx(max(numeric, 0.0), abs=1e-6 * beta**2 + 1e-12)  # and tight


@pytest.mark.parametrize("k, beta, eta", [(3.0, 0.5, 1e-2), (3.0, 0.25, 1e-4), (2.5, 1.0, 1e-3),
                                           (5.0, 0.1, 1e-3)])
def test_excess_beyond_a_share_of_the_loss_bounds_a_dense_scan(k, beta, eta):
    """|x|^k, k > 2: sup(Îc − (1 + η)c) is finite for η > 0 (the excess grows like |x|^{k−2}); the
    bound is never below a dense scan over everywhere it can be positive, and within 10% of it."""
    loss = dpdro.PowerLoss(k)
    e = loss.grid_interpolation_excess(beta, eta)
    assert loss.grid_interpolation_excess(beta) is None  # η = 0: unbounded
    reach = 2 * beta * math.sqrt(k * (k - 1) / 8 * 2 ** (k - 2) / eta) + 2 * beta
    x = np.linspace(0.0, reach, int(reach / beta) * 200 + 1)
    a = np.floor(x / beta) * beta
    t = (x - a) / beta
    numeric = float(np.max((1 - t) * loss(a) + t * loss(a + beta) - (1 + eta) * loss(x)))
    assert numeric - 1e-12 * max(1.0, abs(numeric)) <= e <= 1.1 * numeric


def test_excess_beyond_the_floats_is_no_finite_bound():
    """|x|^60, η = 1e-10: the excess near x = 1e6 is about 442·x^58 − 1e-10·x^60 ≈ 1e351, both
    terms beyond the floats (inf − inf was NaN, skipped: a finite 1.8e177 was reported, too small,
    so the rounding bound was invalid). No finite bound is known there: ``None``. Where the terms
    stay finite (|x|^40) the bound is finite."""
    assert dpdro.PowerLoss(60).grid_interpolation_excess(1.0, 1e-10) is None
    assert dpdro.PowerLoss(100).grid_interpolation_excess(0.01, 1e-3) is None
    assert math.isfinite(dpdro.PowerLoss(40).grid_interpolation_excess(1.0, 1e-10))


@pytest.mark.parametrize("k, beta", [(1.5, 1 / 69), (1.2, 0.5), (1.8, 3.0)])
def test_grid_excess_credit_keeps_the_rounding_bound_valid(k, beta):
    """|x|^k, 1 < k < 2: D_R charges point i c(iβ) + κ_i and subtracts e_β, valid iff the excess
    (Îc − c)(x) ≤ e_β − ((1 − s)κ_i + sκ_{i+1}) for x = (i + s)β (dpdro.Loss.grid_excess_credit):
    a dense scan over both sides and far out; κ = 0 next to 0 and positive beyond."""
    loss = dpdro.PowerLoss(k)
    e = loss.grid_interpolation_excess(beta)
    x = np.concatenate([np.linspace(-8 * beta, 8 * beta, 16001),
                        np.linspace(40 * beta, 43 * beta, 3001)])
    i = np.floor(x / beta)
    s = x / beta - i
    excess = (1 - s) * loss(i * beta) + s * loss((i + 1) * beta) - loss(x)
    kappa = lambda j: loss.grid_excess_credit(beta, j)  # noqa: E731
    credit = (1 - s) * kappa(i) + s * kappa(i + 1)
    assert np.all(excess <= e - credit + 1e-15 * beta**k)
    pts = np.arange(-5, 6)
    assert np.all(kappa(pts)[np.abs(pts) <= 1] == 0) and np.all(kappa(pts)[np.abs(pts) >= 2] > 0)
    assert np.all(kappa(pts) < e)
    assert dpdro.PowerLoss(2.0).grid_excess_credit(beta, pts) is None  # the excess is constant
    assert dpdro.PowerLoss(3.0).grid_excess_credit(beta, pts) is None
    assert dpdro.make_loss("l1").grid_excess_credit(beta, pts) is None


def test_grid_interpolation_excess_closed_forms_and_unavailable():
    assert dpdro.make_loss("l1").grid_interpolation_excess(0.1) == 0.0
    assert dpdro.make_loss("l2").grid_interpolation_excess(0.1) == pytest.approx(0.0025, rel=1e-14)
    assert dpdro.PowerLoss(3.0).grid_interpolation_excess(0.1) is None  # unbounded in |x|
    assert (
        dpdro.CallableLoss(lambda x: np.abs(x), name="abs").grid_interpolation_excess(0.1) is None
    )
    with pytest.raises(ValueError):
        dpdro.make_loss("l2").grid_interpolation_excess(0.0)


@pytest.mark.parametrize(
    "func",
    [
        lambda x: np.abs(x) ** 1.2,  # a kink at 0
        lambda x: np.floor(np.abs(x)),  # jumps at the integers
        lambda x: math.log1p(abs(x)) + 0.1 * x * x,  # not vectorised
        lambda x: x**4,  # a polynomial both rules integrate exactly
    ],
    ids=["kink", "jumps", "scalar-only", "quartic"],
)
def test_callable_cell_average_equals_adaptive_quadrature_with_its_error(func):
    """CallableLoss.cell_average integrates every cell at once by Gauss–Kronrod and falls back to
    adaptive quadrature where |K15 − G7| exceeds quad's tolerances: on 2,000 cells (one on each
    kink or jump included) it equals quad's value plus quad's error estimate, as before the
    vectorised rule, to 1e-13 relative, and never lies below quad's value."""
    loss = dpdro.CallableLoss(func)
    a = np.linspace(-50.0, 49.9, 2000) + 0.013
    b = a + 0.05
    got = loss.cell_average(a, b)
    for lo, hi, g in zip(a, b, got, strict=True):
        val, err = integrate.quad(
            lambda x: float(func(x)), lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200
        )
        assert g == pytest.approx((val + err) / (hi - lo), rel=1e-13, abs=1e-14)
        assert g >= val / (hi - lo) * (1 - 1e-15)


@pytest.mark.parametrize(
    "loss",
    [dpdro.PowerLoss(1.0), dpdro.PowerLoss(2.0), dpdro.PowerLoss(0.5), dpdro.PowerLoss(3.0),
     dpdro.Pinball(0.3), dpdro.asymmetric_loss(),
     dpdro.PiecewiseLinear([-1.0, 0.0, 2.0], [1.0, 0.5, 0.5], left_slope=-2.0, right_slope=3.0)],
)
@pytest.mark.parametrize("a, b", [(0.0, math.inf), (0.5, 3.0), (-math.inf, 0.0), (-4.0, -0.5),
                                  (-1.5, 2.5)])
def test_slope_bounds_bound_every_difference_quotient(loss, a, b):
    s, big_s = loss.slope_bounds(a, b)
    lo, hi = max(a, -50.0), min(b, 50.0)
    x = np.random.default_rng(5).uniform(lo, hi, size=(2, 4000))
    y, z = np.sort(x, axis=0)
    keep = z - y > 1e-6
    quotient = (loss(z[keep]) - loss(y[keep])) / (z[keep] - y[keep])
    assert np.all(quotient >= s - 1e-9) and np.all(quotient <= big_s + 1e-9)
