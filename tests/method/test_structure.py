"""The shape of the package: an acyclic import graph, the engine without the literature zoo, modules
and functions of a readable size, and method tests that need nothing but the installed wheel.

The import graph is read statically (every ``import`` and ``from … import`` statement of every
module, those inside functions included), so a cycle hidden behind a function-level import is found
as well as one that breaks ``import``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpdro"
TESTS = Path(__file__).resolve().parent
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 60  # body lines without the docstring
REASON = "# Long because"  # a function longer than that states why, in a comment of this form
# the engine: the modules that compute bounds and releases (they need closed forms, not the zoo)
ENGINE = ("dpdro.optimal", "dpdro.grid", "dpdro.bounds", "dpdro.release", "dpdro.reference",
          "dpdro.data_dependent.bounds", "dpdro.data_dependent.optimal")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _imports(name: str) -> set[str]:
    """The dpdro modules that importing ``name`` imports (directly)."""
    tree = ast.parse(MODULES[name].read_text())
    here = name if _is_package(name) else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            if t in MODULES:
                out.add(t)
                out |= {a for a in _ancestors(t) if a in MODULES}
    return out - _ancestors(name) - {name}


GRAPH = {name: _imports(name) for name in MODULES}


def _closure(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for m in GRAPH[todo.pop()]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def test_the_import_graph_has_no_cycle():
    cycles = sorted(m for m in MODULES if m in _closure(m))
    assert not cycles, f"modules on an import cycle: {cycles}"


@pytest.mark.parametrize("module", ENGINE)
def test_the_engine_imports_closed_forms_not_the_mechanism_zoo(module):
    assert module in MODULES
    zoo = sorted(
        m for m in _closure(module) if m == "dpdro.mechanisms" or m.startswith("dpdro.mechanisms.")
    )
    assert not zoo, f"{module} imports {zoo}"


def test_every_module_is_importable_and_graph_is_read():
    assert len(MODULES) > 30 and GRAPH["dpdro"]  # the package imports its parts


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_too_long(name):
    n = len(MODULES[name].read_text().splitlines())
    assert n <= MAX_MODULE_LINES, f"{name} has {n} lines"


def _long_functions(path: Path):
    source = path.read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if (
            isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and len(body) > 1
        ):
            body = body[1:]
        n = body[-1].end_lineno - body[0].lineno + 1
        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
        if n > MAX_FUNCTION_LINES and REASON not in text:
            yield f"{node.name} ({n} lines)"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_long_functions_state_why(name):
    long = list(_long_functions(MODULES[name]))
    assert not long, (
        f"{name}: {long} exceed {MAX_FUNCTION_LINES} lines without a '{REASON}' comment"
    )


def test_method_tests_do_not_import_the_book():
    """tests/method runs with only the wheel installed: no import of repro (or scripts) anywhere."""
    bad = []
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            bad += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("repro", "scripts")]
    assert not bad, bad


def _entry_points():
    import dpdro
    from dpdro import cutting_plane, grid, lp, reference, release
    from dpdro import data_dependent as dd
    from dpdro import mechanisms as m

    return [
        dpdro.Problem, dpdro.Partition, dpdro.upper_bound, dpdro.lower_bound, dpdro.optimal_noise,
        dpdro.certify_delta, dpdro.privacy_profile, dpdro.max_privacy_shortfall,
        dpdro.PiecewiseUniform, dpdro.make_loss, dpdro.PowerLoss, dpdro.PiecewiseLinear,
        dpdro.Pinball, dpdro.CallableLoss, grid.grid_upper_bound, grid.grid_lower_bound,
        reference.reference_upper_bound, cutting_plane.run_cutting_plane, lp.safe_lower_bound,
        release.release, release.repair_by_mixing, dd.Problem, dd.upper_bound, dd.lower_bound,
        dd.optimal_noise, dd.certify_delta, dd.privacy_profile, dd.max_privacy_shortfall,
        dd.Mechanism, m.Laplace, m.Gaussian, m.AnalyticGaussian, m.TruncatedLaplace, m.Staircase,
        m.Tulap, m.near_optimal_lower_bound, m.gaussian_delta, m.truncated_laplace_half_width,
    ]


def test_public_entry_points_document_parameters_and_references():
    """numpydoc ``Parameters`` and ``References`` sections on the public entry points (the latter
    citing the paper's equations, propositions and algorithms, or the literature)."""
    import inspect

    missing = []
    for obj in _entry_points():
        doc = inspect.getdoc(obj) or ""
        for section in ("Parameters", "References"):
            if f"{section}\n{'-' * len(section)}" not in doc:
                missing.append(f"{obj.__module__}.{obj.__qualname__}: {section}")
    assert not missing, missing
