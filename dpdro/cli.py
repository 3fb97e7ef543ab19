"""The ``dpdro`` command line (also ``python -m dpdro``).

.. code-block:: text

    dpdro design  --epsilon E --delta D [--sensitivity S] --loss l1|l2 [--gap G] [--time-limit T]
                  -o noise.json
    dpdro certify noise.json [--epsilon E] [--sensitivity S] [--profile [--points N]] [--json]
    dpdro sample  noise.json -n N [--seed K] [--value F] [--json]
    dpdro compare [--epsilon E --delta D --sensitivity S --loss l1|l2]
                  [--noise noise.json | --gap G]
                  [--time-limit T] [--json]
    dpdro compose --releases K --epsilon E --delta D [--sensitivity S] --loss l1|l2 [--gap G]
                  [--time-limit T] [-o noise.json] [--json]
    dpdro catalog lookup --epsilon E --delta D [--sensitivity S] --loss l1|l2
                  [-o noise.json] [--json]
    dpdro catalog list
    dpdro --version

A noise file is the versioned JSON document of :mod:`dpdro.certificate`; every command that reads
one re-certifies it first and refuses it unless the stored certificate holds for the stored noise.

Exit status: 0 on success; 2 for bad input of any kind (a parameter out of range, an unreadable,
malformed or edited file, an output path that cannot be written), reported as one line on stderr
naming the parameter, the allowed range and the value, before any computation starts; 1 if dpdro
itself fails (one line, ``internal error``: a bug to report); 130 when interrupted; 141, silently,
when the reader of standard output closes it early (``dpdro sample ... | head``, as for SIGPIPE).
No traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__
from . import catalog as _catalog
from ._range import MAX_DESIGN_EPSILON
from ._scaling import check_scale
from .certificate import LOSSES, certificate, document, read_file
from .composition import design_for_releases
from .mechanisms import BASELINES, baselines, meets_delta
from .optimal import SOURCE_NAMES, optimal_noise
from .privacy import MAX_CERTIFIED_EPSILON, certify_delta, check_epsilon
from .problem import Problem
from .sampling import MAX_VALUE, SecureSampler

__all__ = ["main", "EPSILON_RANGE", "DELTA_RANGE", "DEFAULT_TIME_LIMIT", "MAX_DRAWS"]

#: ε and δ a design is requested at (``design``, ``compare`` without ``--noise``, ``compose``): the
#: range over which dpdro.optimal_noise is documented and tested (README, "Usage").
EPSILON_RANGE = (1e-3, MAX_DESIGN_EPSILON)
DELTA_RANGE = (1e-12, 0.9)
#: seconds a design may take unless ``--time-limit`` says otherwise (the best certified bracket
#: found by then is released, and the gap reached is reported).
DEFAULT_TIME_LIMIT = 60.0
#: most draws of one ``dpdro sample`` (about 10 µs each); more from Python with dpdro.SecureSampler.
MAX_DRAWS = 10_000_000
_MAX_POINTS = 1000
_PROFILE_POINTS = 9  # points of `certify --profile` by default
_COMPARE_GAP = 0.02  # the gap of the noise `compare` designs by default
_CHUNK = 65_536


class UsageError(ValueError):
    """Bad input: reported as one line on stderr with exit status 2."""


#: what argparse takes for a negative number rather than an option: its own pattern (-5, -.5, -1.5)
#: missed exponents and infinities, so `--value -1e3` had failed with "expected one argument"
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.I)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):  # no abbreviated options: --eps is not --epsilon
        super().__init__(*args, allow_abbrev=False, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message):  # argparse's usage dump becomes one line
        raise UsageError(message)


# ----------------------------------------------------------------------------- argument types
def _number(name: str, ok, allowed: str):
    """An argparse type: a finite float with ``ok(value)``; the message names ``allowed``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"{name} must be {allowed}, got {text!r}")
        return value

    return parse


def _positive(name: str):
    return _number(name, lambda x: x > 0, "a finite number > 0")


def _unit(name: str):
    return _number(name, lambda x: 0 < x < 1, "in the open interval (0, 1)")


def _epsilon(text: str) -> float:
    """An argparse type: ε > 0, at most the largest ε a certificate is computed at
    (:func:`dpdro.privacy.check_epsilon`, its message naming ``text`` as typed)."""
    value = _positive("epsilon")(text)
    try:
        return check_epsilon(value, given=repr(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _delta(text: str) -> float:
    """An argparse type: δ in (0, 1); δ = 0 (pure DP) is refused with a pointer to the staircase."""
    try:
        pure = float(text) == 0
    except ValueError:
        pure = False
    if pure:
        raise argparse.ArgumentTypeError(
            f"delta must be in the open interval (0, 1), got {text!r}: for pure DP (delta = 0) "
            "the staircase mechanism is optimal (dpdro.mechanisms.Staircase)"
        )
    return _unit("delta")(text)


def _integer(name: str, minimum: int, maximum: int | None = None):
    """An argparse type: an integer in [minimum, maximum]."""
    allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"{name} must be an integer {allowed}, got {text!r}")
        return value

    return parse


def _loss(text: str) -> str:
    if text.lower() not in LOSSES:  # (any case, as the API's make_loss takes it)
        raise argparse.ArgumentTypeError(f"loss must be 'l1' or 'l2', got {text!r}")
    return text.lower()


def _check_json_output(args) -> None:
    """--json and -o - both write to stdout: the summary had been dropped without a word."""
    if args.json and args.output == "-":
        raise UsageError(
            "--json and -o - would both write to stdout: give --output a file name, or drop --json"
        )


# --------------------------------------------------------------------------- checks before any work
def _check_design_range(args) -> None:
    """ε and δ within the range a design is documented for (:data:`EPSILON_RANGE`,
    :data:`DELTA_RANGE`)."""
    for name, value, (lo, hi) in (
        ("epsilon", args.epsilon, EPSILON_RANGE),
        ("delta", args.delta, DELTA_RANGE),
    ):
        if not lo <= value <= hi:
            raise UsageError(
                f"{name} must lie in [{lo:g}, {hi:g}] to design a noise (the range dpdro is "
                f"tested on), got {value!r}"
            )


def _problem(args) -> Problem:
    _check_design_range(args)
    try:
        problem = Problem(
            epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss
        )
        check_scale(problem.sensitivity, problem.loss.degree)  # losses within the float range
        return problem
    except (TypeError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _check_output(path: str | None) -> None:
    """An output path that can be written: checked before a long design, not after it."""
    if path is None or path == "-":
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"output must be a file path, got the directory {path!r}")
    if not parent.is_dir():
        raise UsageError(f"output must be in an existing directory, got {path!r}")
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"output must be a writable path, got {path!r}")


def _read_noise(path: str):
    """(noise, certificate) of a noise file, re-certified (:func:`dpdro.certificate.read_file`)."""
    try:
        return read_file(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ----------------------------------------------------------------------------- output
def _write(path: str, doc: dict) -> None:
    text = json.dumps(doc, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"output must be a writable path, got {path!r} ({exc})") from None


def _say(message: str) -> None:
    print(f"dpdro: {message}", file=sys.stderr, flush=True)


def _emit(args, payload: dict, lines: list[str]) -> None:
    print(json.dumps(payload, indent=1) if getattr(args, "json", False) else "\n".join(lines))


def _design(problem: Problem, gap: float, time_limit: float, loss: str):
    """optimal_noise with start and finish lines on stderr (and its per-round lines on a
    terminal)."""
    _say(
        f"designing {loss} noise for epsilon={problem.epsilon:g}, delta={problem.delta:g}, "
        f"sensitivity={problem.sensitivity:g}, target gap {100 * gap:g}%, "
        f"time limit {time_limit:g} s"
    )
    t0 = time.perf_counter()
    res = optimal_noise(problem, rel_gap=gap, time_limit=time_limit, progress=sys.stderr.isatty())
    reached = (
        "" if res.gap <= gap else f" (target {100 * gap:g}% not reached within the time limit)"
    )
    _say(
        f"done in {time.perf_counter() - t0:.2f} s: expected loss {res.upper.value:.6g}, lower "
        f"bound {res.lower.value:.6g}, gap {_percent(res.gap)}{reached}"
    )
    return res


def _percent(gap: float) -> str:
    """A relative gap as every line of the command line prints it: in percent, two decimals (one
    significant digit below 0.01%, so that a small gap does not print as 0)."""
    p = 100 * gap
    return f"{p:.2f}%" if p >= 0.01 or p == 0 else f"{p:.1g}%"


def _describe(cert: dict) -> str:
    lower = (
        ""
        if cert["lower_bound"] is None
        else (f", optimum >= {cert['lower_bound']:.6g} (gap {_percent(cert['gap'])})")
    )
    return (
        f"{cert['loss']} noise for (epsilon, delta) = ({cert['epsilon']:g}, {cert['delta']:g}), "
        f"sensitivity {cert['sensitivity']:g}\n  expected loss {cert['expected_loss']:.6g}{lower}\n"
        f"  certified delta {cert['certified_delta']:.12g}"
    )


def _step(h: float) -> str:
    """A lattice step as written: ``2^-23`` for a power of two, else ``%g``."""
    m, e = math.frexp(h)
    return f"2^{e - 1}" if m == 0.5 else f"{h:g}"


def _released(res) -> str:
    """The one stderr line of ``dpdro design`` that names what was released (OptimalNoise.source,
    in the words of :data:`dpdro.optimal.SOURCE_NAMES`) and the lattice its cells lie on."""
    base = res.source.removeprefix("shifted_")
    name = SOURCE_NAMES.get(base, base) + (", shifted" if base != res.source else "")
    return f"released: {name}, piecewise uniform on a lattice of step {_step(res.noise.grid)}"


# ----------------------------------------------------------------------------- subcommands
def cmd_design(args) -> None:
    problem = _problem(args)
    _check_output(args.output)
    res = _design(problem, args.gap, args.time_limit, args.loss)
    _say(_released(res))
    cert = certificate(
        res.noise,
        epsilon=args.epsilon,
        delta=args.delta,
        sensitivity=args.sensitivity,
        loss=args.loss,
        upper_bound=res.upper.value,
        lower_bound=res.lower.value,
    )
    _write(args.output, document(res.noise, cert))
    if args.output != "-":
        print(f"wrote {args.output}: {_describe(cert)}")


def cmd_certify(args) -> None:
    if args.points is not None and not args.profile:
        raise UsageError("--points sets the points of --profile: give --profile too")
    noise, cert = _read_noise(args.noise)
    eps = cert["epsilon"] if args.epsilon is None else args.epsilon
    sens = cert["sensitivity"] if args.sensitivity is None else args.sensitivity
    delta = certify_delta(noise, eps, sens)
    payload = {"file": cert, "epsilon": eps, "sensitivity": sens, "certified_delta": delta}
    lines = [
        f"file certificate holds: {_describe(cert)}",
        f"certified delta at epsilon={eps:g}, sensitivity={sens:g}: {delta:.12g}",
    ]
    if cert["lower_bound"] is not None:
        # (an edited, inflated bound had read as proved: δ and the loss are re-derived, it is not)
        lines.insert(1, "  (its optimum bound is as the file records it: certify re-derives the "
                        "noise's delta and loss, not that bound)")
    if args.profile:
        points = _PROFILE_POINTS if args.points is None else args.points
        grid = np.geomspace(eps / 4, min(4 * eps, MAX_CERTIFIED_EPSILON), points)
        profile = [(float(e), certify_delta(noise, float(e), sens)) for e in grid]
        payload["profile"] = [{"epsilon": e, "delta": d} for e, d in profile]
        lines += [
            f"privacy profile at sensitivity {sens:g}:",
            f"{'epsilon':>12}  {'delta(epsilon)':>16}",
        ]
        lines += [f"{e:12.6g}  {d:16.10g}" for e, d in profile]
    _emit(args, payload, lines)


def cmd_sample(args) -> None:
    noise, cert = _read_noise(args.noise)
    if args.seed is not None:
        _say(
            "warning: seeded draws (--seed) are reproducible and NOT for deployment; omit --seed "
            "for secure draws"
        )
    sampler = SecureSampler(
        noise,
        epsilon=cert["epsilon"],
        delta=cert["delta"],
        sensitivity=cert["sensitivity"],
        rng=args.seed,
    )
    if args.json:
        draws = np.atleast_1d(sampler.release(args.value, args.n)).tolist()
        print(
            json.dumps(
                {
                    "value": args.value,
                    "resolution": sampler.resolution,
                    "epsilon": cert["epsilon"],
                    "certified_delta": sampler.certified_delta,
                    "seeded": args.seed is not None,
                    "draws": draws,
                }
            )
        )
        return
    for start in range(0, args.n, _CHUNK):  # streamed: memory does not grow with n
        chunk = sampler.release(args.value, min(_CHUNK, args.n - start))
        sys.stdout.write("".join(f"{x!r}\n" for x in chunk.tolist()))


def _compare_rows(
    noise_loss: float, lower: float | None, mechs: dict, delta: float, loss: str
) -> list:
    rows = [{"mechanism": "dpdro", "expected_loss": noise_loss, "valid": True}]
    for name in BASELINES:
        m = mechs.get(name)
        row = {"mechanism": name, "expected_loss": None if m is None else m.expected_loss(loss)}
        row["valid"] = m is not None and meets_delta(m, delta)
        rows.append(row)
    for row in rows:
        e = row["expected_loss"]
        row["ratio"] = None if e is None else e / noise_loss
        row["gap_bound"] = None if e is None or lower is None else e / lower - 1.0
    return rows


_SETTINGS = ("epsilon", "delta", "sensitivity", "loss")


def _compare_settings(args, cert: dict | None) -> str | None:
    """Fill --epsilon, --delta, --sensitivity and --loss from the noise file where not given; the
    warning to print when a given one differs from the file's (the noise was designed for other
    settings, so it is not optimised for these and the file's lower bound does not apply)."""
    if cert is None:
        missing = [f"--{k}" for k in ("epsilon", "delta", "loss") if getattr(args, k) is None]
        if missing:
            raise UsageError(
                f"compare needs {', '.join(missing)} (or --noise FILE, whose settings are "
                "the default)"
            )
        if args.sensitivity is None:
            args.sensitivity = 1.0
        return None
    given = {k: getattr(args, k) for k in _SETTINGS if getattr(args, k) is not None}
    differ = {k: v for k, v in given.items() if v != cert[k]}
    for k in _SETTINGS:
        if getattr(args, k) is None:
            setattr(args, k, cert[k])
    if not differ:
        return None
    theirs = ", ".join(f"{k}={cert[k]!r}" for k in differ)
    ours = ", ".join(f"{k}={v!r}" for k, v in differ.items())
    return (
        f"warning: the noise file was designed for {theirs}; comparing at {ours}: it is not "
        "optimised for these settings and its lower bound is not used"
    )


def cmd_compare(args) -> None:
    # Long because it reads or designs the noise, then builds the table, the verdict and the JSON
    lower = None
    if args.noise is not None and (args.gap is not None or args.time_limit is not None):
        raise UsageError(
            "--gap and --time-limit apply when compare designs the noise; with --noise the file's "
            "noise is compared as it is"
        )
    gap = _COMPARE_GAP if args.gap is None else args.gap
    limit = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit
    if args.noise is not None:
        noise, cert = _read_noise(args.noise)
        warning = _compare_settings(args, cert)
        certified = certify_delta(noise, args.epsilon, args.sensitivity)
        if certified > args.delta:
            raise UsageError(
                f"noise file {args.noise!r} must be ({args.epsilon:g}, {args.delta:g})-DP at "
                f"sensitivity {args.sensitivity:g}, got certified delta {certified!r}"
            )
        if warning:
            _say(warning)
        same = all(cert[k] == getattr(args, k) for k in _SETTINGS)
        lower = cert["lower_bound"] if same else None
        source = f"noise file {args.noise}"
    else:
        _compare_settings(args, None)
        res = _design(_problem(args), gap, limit, args.loss)
        noise, lower = res.noise, res.lower.value
        released = "an LP's noise" if res.source == "lp" else f"the certified {res.source} cells"
        source = f"optimal_noise(rel_gap={gap:g}) released {released}"
    mechs = baselines(
        epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss
    )
    rows = _compare_rows(noise.expected_loss(args.loss), lower, mechs, args.delta, args.loss)
    what = "E|X|" if args.loss == "l1" else "E X^2"
    lines = [
        f"{what} at epsilon={args.epsilon:g}, delta={args.delta:g}, "
        f"sensitivity={args.sensitivity:g} "
        f"(dpdro: {source}" + ("" if lower is None else f"; optimum >= {lower:.6g}") + ")",
        f"{'mechanism':<18} {what:>12} {'ratio to dpdro':>15} {'gap to optimum <=':>18}",
    ]
    valid = [r for r in rows[1:] if r["valid"] and r["expected_loss"] is not None]
    best = min(valid, key=lambda r: r["expected_loss"], default=None)
    advantage = None if best is None else best["ratio"] - 1.0
    for r in rows:
        if r["expected_loss"] is None:
            lines.append(
                f"{r['mechanism']:<18} {'n/a':>12}   (delta below the certificate's rounding "
                "allowance)"
            )
            continue
        gap = "" if r["gap_bound"] is None else f"{100 * r['gap_bound']:17.2f}%"
        flag = "" if r["valid"] else "   not (epsilon, delta)-DP at these parameters"
        lines.append(
            f"{r['mechanism']:<18} {r['expected_loss']:12.6g} {r['ratio']:15.4f} {gap:>18}{flag}"
        )
    if best is not None:  # dpdro's expected loss relative to the best one's (not the ratio − 1)
        excess = 1.0 / best["ratio"] - 1.0
        lines.append(
            f"best literature mechanism: {best['mechanism']}; dpdro's noise is "
            f"{100 * abs(excess):.3f}% {'below' if excess <= 0 else 'above'} it"
        )
    _emit(
        args,
        {
            "epsilon": args.epsilon,
            "delta": args.delta,
            "sensitivity": args.sensitivity,
            "loss": args.loss,
            "lower_bound": lower,
            "rows": rows,
            "best_literature": None if best is None else best["mechanism"],
            "advantage": advantage,
        },
        lines,
    )


def _compose_report(args, d) -> tuple[list[str], dict]:
    """The lines ``dpdro compose`` prints and the JSON it emits for the design ``d``
    (:class:`dpdro.composition.CompositionDesign`)."""
    what = "E|X|" if args.loss == "l1" else "E X^2"
    g, n = d.gaussian, d.noise
    lines = [
        f"{args.releases} releases of a query of sensitivity {args.sensitivity:g}, jointly "
        f"({args.epsilon:g}, {args.delta:g})-DP; {what} per release:"
    ]
    if n is not None:
        lines.append(
            f"  optimal noise      {n.expected_loss:12.6g}  per release ({n.epsilon:.6g}, "
            f"{n.delta:.3g})-DP, composed delta {n.composed_delta:.4g}"
        )
    lines.append(
        f"  analytic Gaussian  {g.expected_loss:12.6g}  sigma {g.sigma:.6g}, composed delta "
        f"{g.composed_delta:.4g}"
    )
    gaussian = f"add N(0, sigma^2), sigma = {g.sigma:.6g}, to each answer"
    if d.mechanism == "optimal_noise":
        lines.append(f"the optimal noise wins: {100 * (1 - d.ratio):.1f}% below the Gaussian")
    elif n is None:
        lines.append(f"the analytic Gaussian is the only plan ({_no_noise_plan(d)}); {gaussian}")
    else:
        lines.append(
            f"the analytic Gaussian wins: {100 * (1 - 1 / d.ratio):.1f}% below the optimal noise; "
            + gaussian
        )
    payload = {
        "releases": args.releases,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "sensitivity": args.sensitivity,
        "loss": args.loss,
        "winner": d.mechanism,
        "gaussian": {
            "sigma": g.sigma,
            "expected_loss": g.expected_loss,
            "composed_delta": g.composed_delta,
        },
        "optimal_noise": None
        if n is None
        else {
            "epsilon": n.epsilon,
            "delta": n.delta,
            "expected_loss": n.expected_loss,
            "composed_delta": n.composed_delta,
        },
    }
    return lines, payload


def _no_noise_plan(d) -> str:
    """Why a composition design ``d`` has no optimal-noise plan: its last design's error."""
    why = next((row["error"] for row in reversed(d.history) if row.get("error")), None)
    return "no optimal-noise design composes to this budget" + (f": {why}" if why else "")


def cmd_compose(args) -> None:
    _problem(args)  # the ranges and the scale a design needs, checked before any work
    _check_json_output(args)
    if (
        args.epsilon / args.releases < EPSILON_RANGE[0]
        or args.delta / args.releases < DELTA_RANGE[0]
    ):
        raise UsageError(
            f"epsilon/releases and delta/releases must be at least {EPSILON_RANGE[0]:g} and "
            f"{DELTA_RANGE[0]:g} (each release is designed), got {args.epsilon!r}/"
            f"{args.releases} and {args.delta!r}/{args.releases}"
        )
    _check_output(args.output)
    _say(
        f"designing for {args.releases} releases, jointly (epsilon, delta) = ({args.epsilon:g}, "
        f"{args.delta:g})-DP, {args.loss}, time limit {args.time_limit:g} s per design"
    )
    t0 = time.perf_counter()
    d = design_for_releases(
        args.releases,
        args.epsilon,
        args.delta,
        args.sensitivity,
        args.loss,
        rel_gap=args.gap,
        time_limit=args.time_limit,
    )
    _say(f"done in {time.perf_counter() - t0:.2f} s ({len(d.history)} designs)")
    lines, payload = _compose_report(args, d)
    n = d.noise
    if args.output is not None and n is None:  # nothing to write: say so, not only by its absence
        _say(f"warning: no noise file written ({_no_noise_plan(d)}); the Gaussian is the plan")
    if args.output is not None and n is not None:
        cert = certificate(
            n.noise, epsilon=n.epsilon, delta=n.delta, sensitivity=args.sensitivity, loss=args.loss
        )
        _write(args.output, document(n.noise, cert))
        if args.output != "-":
            lines.append(
                f"wrote {args.output}: the optimal noise, certified per release at "
                f"({n.epsilon:.6g}, {n.delta:.3g})"
            )
    if args.output != "-":
        _emit(args, payload, lines)


def cmd_catalog_lookup(args) -> None:
    _check_json_output(args)
    _check_output(args.output)
    try:
        found = _catalog.lookup(
            epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cert = certificate(
        found.noise,
        epsilon=args.epsilon,
        delta=args.delta,
        sensitivity=args.sensitivity,
        loss=args.loss,
        upper_bound=found.upper,
        lower_bound=found.lower,
    )
    if args.output is not None:
        _write(args.output, document(found.noise, cert))
    payload = {
        "certificate": cert,
        "noise_from": found.source,
        "lower_bound_from": found.bound_source,
    }
    lines = [
        _describe(cert),
        f"noise stored at (epsilon, delta) = ({found.source[0]:.6g}, {found.source[1]:.6g}), lower "
        f"bound from ({found.bound_source[0]:.6g}, {found.bound_source[1]:.6g})",
    ]
    if found.source != found.bound_source:
        lines.append(
            "(not a grid point of the catalog: `dpdro design` certifies a noise for exactly "
            "these settings)"
        )
    if args.output is not None and args.output != "-":
        lines.append(f"wrote {args.output}")
    if args.output != "-":
        _emit(args, payload, lines)


def cmd_catalog_list(args) -> None:
    print(_catalog.load().summary())


# ----------------------------------------------------------------------------- the parser
def _parser() -> _Parser:
    # Long because it declares the whole command-line contract (DESIGN.md) in one place: every
    # subcommand with its options, in the order `dpdro --help` lists them.
    ap = _Parser(
        prog="dpdro",
        description="Certified optimal noise for (epsilon, delta)-differential privacy.",
    )
    ap.add_argument("--version", action="version", version=f"dpdro {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def privacy(p, *, delta=True, from_file=False, required=True):
        """--epsilon, --delta and --sensitivity (default 1); with ``from_file`` optional, defaulting
        to the noise file's."""
        p.add_argument("--epsilon", type=_epsilon, required=required and not from_file,
                       help="epsilon > 0")
        if delta:
            p.add_argument("--delta", type=_delta, required=required, help="delta in (0, 1)")
        default = None if from_file or not required else 1.0
        p.add_argument(
            "--sensitivity",
            type=_positive("sensitivity"),
            default=default,
            help="sensitivity > 0 of the query"
            + (" (default: the file's)" if default is None else " (default 1)"),
        )

    def solve(p, gap: float, unset: bool = False):
        """--gap and --time-limit (``unset``: default None, resolved by the command)."""
        p.add_argument("--gap", type=_positive("gap"), default=None if unset else gap,
                       help=f"target relative gap (default {gap:g})")
        p.add_argument("--time-limit", type=_positive("time-limit"),
                       default=None if unset else DEFAULT_TIME_LIMIT,
                       help=f"seconds (default {DEFAULT_TIME_LIMIT:g}; the best certified bracket "
                       "found by then is released)")

    p = sub.add_parser(
        "design", help="compute a certified near-optimal noise and write it with its certificate"
    )
    privacy(p)
    p.add_argument("--loss", type=_loss, required=True, help="l1 (E|X|) or l2 (E X^2)")
    solve(p, 0.01)
    p.add_argument("-o", "--output", required=True, help="noise file to write ('-': stdout)")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser(
        "certify", help="re-certify a noise file; the exact delta at (epsilon, sensitivity)"
    )
    p.add_argument("noise", help="noise file")
    privacy(p, delta=False, from_file=True)
    p.add_argument("--profile", action="store_true",
                   help="print delta(epsilon') for epsilon' in [epsilon/4, 4 epsilon] (at most "
                   f"{MAX_CERTIFIED_EPSILON:g})")
    p.add_argument("--points", type=_integer("points", 1, _MAX_POINTS), default=None,
                   help=f"points of the profile (default {_PROFILE_POINTS})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_certify)

    p = sub.add_parser(
        "sample", help="draw noise (or value + noise) with the exact sampler, one number per line"
    )
    p.add_argument("noise", help="noise file")
    p.add_argument("-n", type=_integer("n", 1, MAX_DRAWS), required=True, help="number of draws")
    p.add_argument(
        "--value",
        type=_number("value", lambda x: abs(x) <= MAX_VALUE, "a number in [-1e300, 1e300]"),
        default=0.0,
        help="query answer f: release f + noise (default 0: noise only)",
    )
    p.add_argument(
        "--seed",
        type=_integer("seed", 0),
        default=None,
        help="reproducible draws, NOT for deployment",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser(
        "compare", help="expected loss of the optimal noise against the literature mechanisms"
    )
    privacy(p, required=False)
    p.add_argument("--loss", type=_loss, default=None, help="l1 or l2")
    p.add_argument(
        "--noise",
        default=None,
        help="a noise file to compare (default: design one); its settings are the default",
    )
    solve(p, _COMPARE_GAP, unset=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "compose",
        help="noise for k releases under a total budget: optimal noise or "
        "Gaussian, by their composed privacy",
    )
    p.add_argument("--releases", type=_integer("releases", 1, 10_000), required=True,
                   help="number of releases k")
    privacy(p)
    p.add_argument("--loss", type=_loss, required=True, help="l1 or l2")
    p.add_argument("--gap", type=_positive("gap"), default=0.01,
                   help="target relative gap of each design (default 0.01)")
    p.add_argument("--time-limit", type=_positive("time-limit"), default=30.0,
                   help="seconds per design (default 30)")
    p.add_argument("-o", "--output", default=None,
                   help="write the optimal noise (certified per release) as a noise file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compose)

    p = sub.add_parser("catalog", help="certified precomputed noises")
    csub = p.add_subparsers(dest="catalog_command", required=True, parser_class=_Parser)
    q = csub.add_parser(
        "lookup", help="the best stored noise for (epsilon, delta), with a certified bracket"
    )
    privacy(q)
    q.add_argument("--loss", type=_loss, required=True, help="l1 or l2")
    q.add_argument("-o", "--output", default=None, help="also write it as a noise file")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_catalog_lookup)
    q = csub.add_parser("list", help="the covered range and the worst bracket gap")
    q.set_defaults(func=cmd_catalog_list)
    return ap


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0; 2 for bad input; 1 for an internal
    error)."""
    try:
        args = _parser().parse_args(argv)
        args.func(args)
        sys.stdout.flush()  # (a closed pipe is found here, not at exit)
    except UsageError as exc:
        print(f"dpdro: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpdro: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed its end (`dpdro sample ... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (no error at exit)
        return 141
    except Exception as exc:  # noqa: BLE001 - a failure of dpdro, not of the input: one line, no traceback
        message = " ".join(str(exc).split())
        print(
            f"dpdro: internal error: {type(exc).__name__}: {message} (please report it with the "
            "command line)",
            file=sys.stderr,
        )
        return 1
    return 0
