"""The public API of dpdro: the names of DESIGN.md section 2, the namespaces, and argument
checks."""

import subprocess
import sys

import numpy as np
import pytest

import dpdro
import dpdro.optimal
from dpdro import data_dependent as dd

DESIGN_NAMES = [
    "Problem",
    "Partition",
    "upper_bound",
    "lower_bound",
    "optimal_noise",
    "certify_delta",
    "PiecewiseUniform",
    "Pinball",
    "asymmetric_loss",
]


def test_top_level_names():
    assert dpdro.__all__ == sorted(dpdro.__all__)
    for name in DESIGN_NAMES + [
        "relative_gap",
        "PrivacyProfile",
        "OptimalNoise",
        "UpperBound",
        "LowerBound",
        "Shortfall",
        "max_privacy_shortfall",
        "privacy_profile",
        "Loss",
        "PowerLoss",
        "PiecewiseLinear",
        "CallableLoss",
        "mechanisms",
        "data_dependent",
        "SecureSampler",
        "composition",
        "certificate",
        "catalog",
    ]:
        assert name in dpdro.__all__ and hasattr(dpdro, name), name
    for name in (
        "BoundingLP",
        "DDBoundingLP",
        "benchmarks",
        "datasets",
        "ledger",
        "geo",
        "related",
        "DataDependentProblem",
        "dd_upper_bound",
        "coordinate_descent_loss",
    ):
        assert not hasattr(dpdro, name), name
    # the LP classes stay importable from their modules
    from dpdro.bounds import BoundingLP
    from dpdro.data_dependent.lp import DDBoundingLP

    assert (
        BoundingLP.__module__ == "dpdro.bounds"
        and DDBoundingLP.__module__ == "dpdro.data_dependent.lp"
    )


def test_data_dependent_namespace_mirrors_the_data_independent_one():
    assert dd.__all__ == sorted(dd.__all__)
    assert set(dd.__all__) == {
        "Problem",
        "upper_bound",
        "lower_bound",
        "UpperBound",
        "LowerBound",
        "Mechanism",
        "certify_delta",
        "privacy_profile",
        "PrivacyProfile",
        "max_privacy_shortfall",
        "Shortfall",
        "optimal_noise",
        "DDOptimalNoise",
    }
    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=0.5, phi_lo=0.0, phi_hi=1.5)
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(4, 0.25))
    assert isinstance(ub, dd.UpperBound) and isinstance(ub.mechanism, dd.Mechanism)
    assert (
        dd.certify_delta(ub.noises, ub.mechanism.piece_edges, 1.0, 0.5)
        == ub.mechanism.certify()
        <= 0.2
    )
    assert repr(prob).startswith("data_dependent.Problem(")


def test_import_dpdro_loads_no_book_modules():
    code = (
        "import sys, dpdro; bad = [m for m in sys.modules if m.split('.')[0] in ('repro', "
        "'matplotlib', "
        "'pandas', 'cvxpy')]; print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_samplers_take_size_then_rng():
    rng = lambda: np.random.default_rng(5)  # noqa: E731
    noise = dpdro.PiecewiseUniform([0.0, 1.0, 2.0], [0.5, 0.5])
    mechs = [
        noise,
        dpdro.mechanisms.Laplace(epsilon=1.0),
        dpdro.mechanisms.TruncatedLaplace(epsilon=1.0, delta=0.1),
        dpdro.mechanisms.Staircase(epsilon=1.0),
        dpdro.mechanisms.AnalyticGaussian(epsilon=1.0, delta=0.1),
    ]
    for m in mechs:
        a, b = m.sample(7, rng()), m.sample(size=7, rng=rng())
        assert a.shape == (7,) and np.array_equal(a, b), type(m).__name__


# -------------------------------------------------------------------- optimal_noise's arguments
PROB = dpdro.Problem(epsilon=1.0, delta=0.2)
BAD_ARGUMENTS = [
    (dict(rel_gap=0.0), ValueError, r"rel_gap must be finite and > 0, got 0.0"),
    (dict(rel_gap="1%"), TypeError, r"rel_gap must be a real number, got '1%'"),
    (dict(k_start=0), ValueError, r"k_start must be a positive integer \(>= 1\), got 0"),
    (
        dict(k_start=2.5),
        TypeError,
        r"k_start must be a positive integer \(>= 1\), got 2.5 of type float",
    ),
    (dict(k_start=8, max_k=4), ValueError, r"k_start must be at most max_k = 4, got 8"),
    (dict(k_start=10**6), ValueError, r"k_start must be at most max_k = 4096, got 1000000"),
    (dict(max_k=0), ValueError, r"max_k must be a positive integer \(>= 1\), got 0"),
    (dict(time_limit=0.0), ValueError, r"time_limit must be None or finite and > 0, got 0.0"),
    (dict(time_limit="60"), TypeError, r"time_limit must be None or a real number, got '60'"),
    (dict(atom="yes"), TypeError, r"atom must be True or False, got 'yes'"),
    (
        dict(progress="yes"),
        TypeError,
        r"progress must be True, False or a callable taking a dict, got 'yes'",
    ),
]


@pytest.mark.parametrize("kwargs, exc, match", BAD_ARGUMENTS)
def test_optimal_noise_checks_every_argument_before_solving(monkeypatch, kwargs, exc, match):
    def no_solve(*args, **kw):  # pragma: no cover - reached only if validation comes too late
        raise AssertionError("a bound was solved before the arguments were checked")

    monkeypatch.setattr(dpdro.optimal, "grid_upper_bound", no_solve)
    monkeypatch.setattr(dpdro.optimal, "grid_lower_bound", no_solve)
    with pytest.raises(exc, match=match):
        dpdro.optimal_noise(PROB, **kwargs)


def test_optimal_noise_checks_the_problem_before_solving(monkeypatch):
    monkeypatch.setattr(dpdro.optimal, "grid_upper_bound", lambda *a, **k: pytest.fail("solved"))
    with pytest.raises(TypeError, match="problem must be a dpdro.Problem, got dict"):
        dpdro.optimal_noise({"epsilon": 1.0, "delta": 0.2})


def test_optimal_noise_accepts_valid_alternatives():
    res = dpdro.optimal_noise(
        PROB, rel_gap=0.2, k_start=4.0, max_k=8, time_limit=60, atom=False, progress=False
    )
    assert np.allclose(res.partition.edges, res.noise.edges)
    assert res.lower.value <= res.upper.value and res.noise.atom == 0
