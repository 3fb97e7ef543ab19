r"""Noise files: a released noise with its certificate, as a versioned JSON document that is
re-checked whenever it is read.

A document is a JSON object

.. code-block:: text

    {"format": "dpdro-noise", "version": 1,
     "noise": PiecewiseUniform.to_dict(),
     "certificate": {"epsilon": ε, "delta": δ, "sensitivity": Δf, "loss": "l1" | "l2",
                     "certified_delta": certify_delta(noise, ε, Δf), "expected_loss": E c(X),
                     "upper_bound": P, "lower_bound": D or null, "gap": (P − D)/D or null},
     "software": {"dpdro": …, "numpy": …, "scipy": …, "highspy": …}, "created": ISO date}

Reading (:func:`read_document`) never trusts the stored numbers: it rebuilds the noise, certifies it
again at the stored (ε, Δf) and requires

1. ``certify_delta(noise, ε, Δf) <= δ``: the privacy claim holds for the noise as stored;
2. the recomputed certified δ and expected loss equal the stored ones (relative 1e-9): the file
   describes the noise it contains, so an edited probability or edge is detected even when the
   edited noise happens to be private.

The lower bound D is the objective of a dual-feasible point of an LP (:func:`dpdro.lower_bound`),
which the file does not contain; it is recorded, not re-derived, and it is not a privacy claim.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from importlib import metadata
from pathlib import Path

from ._validation import check_choice, check_open_unit, check_positive
from .noise import PiecewiseUniform
from .privacy import certify_delta

__all__ = [
    "FORMAT",
    "VERSION",
    "LOSSES",
    "certificate",
    "document",
    "read_document",
    "read_file",
    "software_versions",
]

FORMAT = "dpdro-noise"
VERSION = 1
LOSSES = ("l1", "l2")
_RTOL = 1e-9


def software_versions() -> dict:
    """Installed versions of dpdro and the libraries its certificates depend on."""
    out = {}
    for dist in ("dpdro", "numpy", "scipy", "highspy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:  # pragma: no cover - dpdro run from a source tree
            out[dist] = None
    return out


def certificate(
    noise: PiecewiseUniform,
    *,
    epsilon,
    delta,
    sensitivity,
    loss,
    upper_bound=None,
    lower_bound=None,
) -> dict:
    """The certificate of ``noise`` for (ε, δ, Δf) and ``loss`` ("l1" or "l2"), computed afresh.

    ``upper_bound`` defaults to the expected loss; ``lower_bound`` (a certified lower bound on the
    optimum, e.g. ``optimal_noise(...).lower.value``) may be None. Raises ``ValueError`` unless
    ``certify_delta(noise, epsilon, sensitivity) <= delta``.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    loss = check_choice("loss", loss, LOSSES)
    certified = certify_delta(noise, epsilon, sensitivity)
    if certified > delta:
        raise ValueError(
            f"noise must be ({epsilon!r}, {delta!r})-DP at sensitivity {sensitivity!r}: "
            f"certify_delta gives {certified!r} > delta = {delta!r}"
        )
    expected = noise.expected_loss(loss)
    upper = expected if upper_bound is None else float(upper_bound)
    lower = None if lower_bound is None else float(lower_bound)
    gap = None if lower is None or lower <= 0 else (upper - lower) / lower
    return {
        "epsilon": epsilon,
        "delta": delta,
        "sensitivity": sensitivity,
        "loss": loss,
        "certified_delta": certified,
        "expected_loss": expected,
        "upper_bound": upper,
        "lower_bound": lower,
        "gap": gap,
    }


def document(noise: PiecewiseUniform, cert: dict) -> dict:
    """The versioned JSON document of ``noise`` and its certificate (see the module docstring)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "noise": noise.to_dict(),
        "certificate": cert,
        "software": software_versions(),
        "created": datetime.date.today().isoformat(),
    }


def _field(doc, key: str, kinds: tuple, what: str, where: str = ""):
    """``doc[key]`` if it is one of ``kinds`` (bool excluded), else a ``ValueError`` naming it."""
    value = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise ValueError(f"{where}{key} must be {what}, got {value!r}")
    return value


def read_document(doc) -> tuple[PiecewiseUniform, dict]:
    """(noise, certificate) from a parsed document, re-certified (module docstring); ``ValueError``
    naming the field, what it must be and what was found, for anything else."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"format must be {FORMAT!r} (a dpdro noise file), got {found!r}")
    if doc.get("version") != VERSION:
        raise ValueError(
            f"version must be {VERSION} (this dpdro reads version {VERSION}), "
            f"got {doc.get('version')!r}"
        )
    cert = _field(doc, "certificate", (dict,), "a JSON object")
    try:
        noise = PiecewiseUniform.from_dict(_field(doc, "noise", (dict,), "a JSON object"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"noise must be a valid PiecewiseUniform: {exc}") from None
    for key in (
        "epsilon",
        "delta",
        "sensitivity",
        "certified_delta",
        "expected_loss",
        "upper_bound",
    ):
        _field(cert, key, (int, float), "a number", "certificate.")
    fresh = certificate(
        noise,
        epsilon=cert["epsilon"],
        delta=cert["delta"],
        sensitivity=cert["sensitivity"],
        loss=cert.get("loss"),
        upper_bound=cert["upper_bound"],
        lower_bound=cert.get("lower_bound"),
    )
    for key in ("certified_delta", "expected_loss"):
        if not math.isclose(fresh[key], cert[key], rel_tol=_RTOL, abs_tol=1e-300):
            raise ValueError(
                f"certificate.{key} must equal the value recomputed from the stored noise, "
                f"{fresh[key]!r}, got {cert[key]!r} (the file was edited or is corrupt)"
            )
    upper, lower = fresh["upper_bound"], fresh["lower_bound"]
    if upper < fresh["expected_loss"] * (1 - _RTOL) or (lower is not None and lower > upper):
        raise ValueError(
            f"certificate bounds must satisfy lower_bound <= expected_loss <= upper_bound = "
            f"{fresh['expected_loss']!r}, got lower_bound = {lower!r}, upper_bound = {upper!r}"
        )
    return noise, fresh


def read_file(path: str | os.PathLike) -> tuple[PiecewiseUniform, dict]:
    """(noise, certificate) of the noise file at ``path``, re-certified (:func:`read_document`).

    Raises
    ------
    ValueError
        One sentence naming the file and what is wrong with it: unreadable, not UTF-8, not JSON, or
        refused by :func:`read_document`.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike naming a noise file, got {path!r}")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"noise file must be a readable UTF-8 file, got {str(path)!r} ({exc})"
        ) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"noise file must contain JSON, got {str(path)!r} ({exc})") from None
    try:
        return read_document(doc)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"noise file {str(path)!r} is refused: {exc}") from None
