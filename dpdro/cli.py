"""The ``dpdro`` command line (also ``python -m dpdro``).

.. code-block:: text

    dpdro design  --epsilon E --delta D --sensitivity S --loss l1|l2 --gap G [--time-limit T] -o noise.json
    dpdro certify noise.json [--epsilon E] [--sensitivity S] [--profile] [--json]
    dpdro sample  noise.json -n N [--seed K] [--value F] [--json]
    dpdro compare --epsilon E --delta D --sensitivity S --loss l1|l2 [--noise noise.json | --gap G] [--json]
    dpdro catalog lookup --epsilon E --delta D --sensitivity S --loss l1|l2 [-o noise.json] [--json]
    dpdro catalog list

A noise file is the versioned JSON document of :mod:`dpdro.certificate`; every command that reads one
re-certifies it first and refuses it (exit status 2) unless the stored certificate holds for the
stored noise. Bad input of any kind (a parameter out of range, an unreadable, malformed or edited
file) prints one line on stderr naming the parameter, the allowed range and the value, and exits
with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from . import catalog as _catalog
from .certificate import LOSSES, certificate, document, read_document
from .mechanisms import BASELINES, baselines, meets_delta
from .optimal import optimal_noise
from .privacy import certify_delta
from .problem import Problem
from .sampling import SecureSampler

__all__ = ["main"]


class UsageError(ValueError):
    """Bad input: reported as one line on stderr with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's usage dump becomes one line
        raise UsageError(message)


# ------------------------------------------------------------------------------------- argument types
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


def _integer(name: str, minimum: int):
    """An argparse type: an integer >= ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {minimum}, got {text!r}")
        return value
    return parse


def _loss(text: str) -> str:
    if text not in LOSSES:
        raise argparse.ArgumentTypeError(f"loss must be 'l1' or 'l2', got {text!r}")
    return text


# ------------------------------------------------------------------------------------- files and output
def _read_noise(path: str):
    """(noise, certificate) of a noise file, re-certified (:func:`dpdro.certificate.read_document`)."""
    try:
        text = Path(path).read_text(encoding="utf-8")  # a user's file, named on the command line
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"noise file must be a readable UTF-8 file, got {path!r} ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"noise file must contain JSON, got {path!r} ({exc})") from None
    try:
        return read_document(doc)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"noise file {path!r} is refused: {exc}") from None


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


def _design(problem: Problem, gap: float, time_limit: float | None, loss: str):
    """optimal_noise with start and finish lines on stderr (and its per-round lines on a terminal)."""
    limit = "none" if time_limit is None else f"{time_limit:g} s"
    _say(f"designing {loss} noise for epsilon={problem.epsilon:g}, delta={problem.delta:g}, "
         f"sensitivity={problem.sensitivity:g}, target gap {gap:g}, time limit {limit}")
    t0 = time.perf_counter()
    res = optimal_noise(problem, rel_gap=gap, time_limit=time_limit, progress=sys.stderr.isatty())
    reached = "" if res.gap <= gap else f" (target {gap:g} not reached within the time limit)"
    _say(f"done in {time.perf_counter() - t0:.1f} s: expected loss {res.upper.value:.6g}, lower bound "
         f"{res.lower.value:.6g}, gap {res.gap:.4g}{reached}")
    return res


def _emit(args, payload: dict, lines: list[str]) -> None:
    print(json.dumps(payload, indent=1) if getattr(args, "json", False) else "\n".join(lines))


# ------------------------------------------------------------------------------------- subcommands
def cmd_design(args) -> None:
    problem = Problem(epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss)
    res = _design(problem, args.gap, args.time_limit, args.loss)
    cert = certificate(res.noise, epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity,
                       loss=args.loss, upper_bound=res.upper.value, lower_bound=res.lower.value)
    _write(args.output, document(res.noise, cert))
    if args.output != "-":
        print(f"wrote {args.output}: {_describe(cert)}")


def _describe(cert: dict) -> str:
    lower = "" if cert["lower_bound"] is None else (
        f", optimum >= {cert['lower_bound']:.6g} (gap {100 * cert['gap']:.2f}%)")
    return (f"{cert['loss']} noise for (epsilon, delta) = ({cert['epsilon']:g}, {cert['delta']:g}), sensitivity "
            f"{cert['sensitivity']:g}\n  expected loss {cert['expected_loss']:.6g}{lower}\n"
            f"  certified delta {cert['certified_delta']:.12g}")


def cmd_certify(args) -> None:
    noise, cert = _read_noise(args.noise)
    eps = cert["epsilon"] if args.epsilon is None else args.epsilon
    sens = cert["sensitivity"] if args.sensitivity is None else args.sensitivity
    delta = certify_delta(noise, eps, sens)
    payload = {"file": cert, "epsilon": eps, "sensitivity": sens, "certified_delta": delta}
    lines = [f"file certificate holds: {_describe(cert)}",
             f"certified delta at epsilon={eps:g}, sensitivity={sens:g}: {delta:.12g}"]
    if args.profile:
        grid = np.geomspace(eps / 4, 4 * eps, args.points)
        profile = [(float(e), certify_delta(noise, float(e), sens)) for e in grid]
        payload["profile"] = [{"epsilon": e, "delta": d} for e, d in profile]
        lines += [f"privacy profile at sensitivity {sens:g}:", f"{'epsilon':>12}  {'delta(epsilon)':>16}"]
        lines += [f"{e:12.6g}  {d:16.10g}" for e, d in profile]
    _emit(args, payload, lines)


def cmd_sample(args) -> None:
    noise, cert = _read_noise(args.noise)
    if args.seed is not None:
        _say("warning: seeded draws (--seed) are reproducible and NOT for deployment; omit --seed for secure draws")
    sampler = SecureSampler(noise, epsilon=cert["epsilon"], delta=cert["delta"], sensitivity=cert["sensitivity"],
                            rng=args.seed)
    draws = np.atleast_1d(sampler.release(args.value, args.n)).tolist()
    if args.json:
        print(json.dumps({"value": args.value, "resolution": sampler.resolution, "epsilon": cert["epsilon"],
                          "certified_delta": sampler.certified_delta, "seeded": args.seed is not None,
                          "draws": draws}))
    else:
        print("\n".join(repr(x) for x in draws))


def _compare_rows(noise_loss: float, lower: float | None, mechs: dict, delta: float, loss: str) -> list[dict]:
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


def cmd_compare(args) -> None:
    lower = None
    if args.noise is not None:
        noise, cert = _read_noise(args.noise)
        certified = certify_delta(noise, args.epsilon, args.sensitivity)
        if certified > args.delta:
            raise UsageError(f"noise file {args.noise!r} must be ({args.epsilon:g}, {args.delta:g})-DP at sensitivity "
                             f"{args.sensitivity:g}, got certified delta {certified!r}")
        same = all(cert[k] == getattr(args, k) for k in ("epsilon", "delta", "sensitivity", "loss"))
        lower = cert["lower_bound"] if same else None
        source = f"noise file {args.noise}"
    else:
        problem = Problem(epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss)
        res = _design(problem, args.gap, args.time_limit, args.loss)
        noise, lower = res.noise, res.lower.value
        source = f"optimal_noise(rel_gap={args.gap:g})"
    mechs = baselines(epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss)
    rows = _compare_rows(noise.expected_loss(args.loss), lower, mechs, args.delta, args.loss)
    what = "E|X|" if args.loss == "l1" else "E X^2"
    lines = [f"{what} at epsilon={args.epsilon:g}, delta={args.delta:g}, sensitivity={args.sensitivity:g} "
             f"(dpdro: {source}" + ("" if lower is None else f"; optimum >= {lower:.6g}") + ")",
             f"{'mechanism':<18} {what:>12} {'ratio to dpdro':>15} {'gap to optimum <=':>18}"]
    for r in rows:
        if r["expected_loss"] is None:
            lines.append(f"{r['mechanism']:<18} {'n/a':>12}   (delta below the certificate's rounding allowance)")
            continue
        gap = "" if r["gap_bound"] is None else f"{100 * r['gap_bound']:17.2f}%"
        flag = "" if r["valid"] else "   not (epsilon, delta)-DP at these parameters"
        lines.append(f"{r['mechanism']:<18} {r['expected_loss']:12.6g} {r['ratio']:15.4f} {gap:>18}{flag}")
    _emit(args, {"epsilon": args.epsilon, "delta": args.delta, "sensitivity": args.sensitivity, "loss": args.loss,
                 "lower_bound": lower, "rows": rows}, lines)


def cmd_catalog_lookup(args) -> None:
    found = _catalog.lookup(epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity, loss=args.loss)
    cert = certificate(found.noise, epsilon=args.epsilon, delta=args.delta, sensitivity=args.sensitivity,
                       loss=args.loss, upper_bound=found.upper, lower_bound=found.lower)
    if args.output is not None:
        _write(args.output, document(found.noise, cert))
    payload = {"certificate": cert, "noise_from": found.source, "lower_bound_from": found.bound_source}
    lines = [_describe(cert),
             f"noise stored at (epsilon, delta) = ({found.source[0]:.6g}, {found.source[1]:.6g}), lower bound "
             f"from ({found.bound_source[0]:.6g}, {found.bound_source[1]:.6g})"]
    if args.output is not None and args.output != "-":
        lines.append(f"wrote {args.output}")
    _emit(args, payload, lines)


def cmd_catalog_list(args) -> None:
    print(_catalog.load().summary())


# ------------------------------------------------------------------------------------- the parser
def _parser() -> _Parser:
    ap = _Parser(prog="dpdro", description="Certified optimal noise for (epsilon, delta)-differential privacy.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def privacy(p, *, delta=True, from_file=False):
        """--epsilon, --delta and --sensitivity (default 1); with ``from_file`` optional, defaulting to the
        noise file's."""
        p.add_argument("--epsilon", type=_positive("epsilon"), required=not from_file, help="epsilon > 0")
        if delta:
            p.add_argument("--delta", type=_unit("delta"), required=True, help="delta in (0, 1)")
        p.add_argument("--sensitivity", type=_positive("sensitivity"), default=None if from_file else 1.0,
                       help="sensitivity > 0 of the query" + (" (default: the file's)" if from_file else " (default 1)"))

    p = sub.add_parser("design", help="compute a certified near-optimal noise and write it with its certificate")
    privacy(p)
    p.add_argument("--loss", type=_loss, required=True, help="l1 (E|X|) or l2 (E X^2)")
    p.add_argument("--gap", type=_positive("gap"), default=0.01, help="target relative gap (default 0.01)")
    p.add_argument("--time-limit", type=_positive("time-limit"), default=None, help="seconds")
    p.add_argument("-o", "--output", required=True, help="noise file to write ('-': stdout)")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser("certify", help="re-certify a noise file; the exact delta at (epsilon, sensitivity)")
    p.add_argument("noise", help="noise file")
    privacy(p, delta=False, from_file=True)
    p.add_argument("--profile", action="store_true", help="print delta(epsilon') for epsilon' in [epsilon/4, 4 epsilon]")
    p.add_argument("--points", type=_integer("points", 1), default=9, help="points of the profile (default 9)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_certify)

    p = sub.add_parser("sample", help="draw noise (or value + noise) with the exact sampler, one number per line")
    p.add_argument("noise", help="noise file")
    p.add_argument("-n", type=_integer("n", 1), required=True, help="number of draws")
    p.add_argument("--value", type=_number("value", lambda x: True, "a finite number"), default=0.0,
                   help="query answer f: release f + noise (default 0: noise only)")
    p.add_argument("--seed", type=_integer("seed", 0), default=None, help="reproducible draws, NOT for deployment")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("compare", help="expected loss of the optimal noise against the literature mechanisms")
    privacy(p)
    p.add_argument("--loss", type=_loss, required=True, help="l1 or l2")
    p.add_argument("--noise", default=None, help="a noise file to compare (default: design one)")
    p.add_argument("--gap", type=_positive("gap"), default=0.02, help="target gap when designing (default 0.02)")
    p.add_argument("--time-limit", type=_positive("time-limit"), default=None, help="seconds, when designing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("catalog", help="certified precomputed noises")
    csub = p.add_subparsers(dest="catalog_command", required=True, parser_class=_Parser)
    q = csub.add_parser("lookup", help="the best stored noise for (epsilon, delta), with a certified bracket")
    privacy(q)
    q.add_argument("--loss", type=_loss, required=True, help="l1 or l2")
    q.add_argument("-o", "--output", default=None, help="also write it as a noise file")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=cmd_catalog_lookup)
    q = csub.add_parser("list", help="the covered range and the worst bracket gap")
    q.set_defaults(func=cmd_catalog_list)
    return ap


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0, or 2 for bad input)."""
    try:
        args = _parser().parse_args(argv)
        args.func(args)
    except (TypeError, ValueError) as exc:  # UsageError, and the library's checks of the same kind
        print(f"dpdro: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0
