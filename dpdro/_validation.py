"""Input checks whose messages name the parameter, the allowed range and the value received."""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_real(name: str, value) -> float:
    """Return ``value`` as a float, or raise ``TypeError`` if it is not a real number."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(
            f"{name} must be a real number, got {value!r} of type {type(value).__name__}"
        )
    return float(value)


def check_positive(name: str, value) -> float:
    """A finite real number > 0."""
    x = check_real(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return x


def check_open_unit(name: str, value) -> float:
    """A real number in the open interval (0, 1)."""
    x = check_real(name, value)
    if not (0.0 < x < 1.0):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value!r}")
    return x


def check_int_array(
    name: str, values, *, strictly_increasing: bool = False, min_len: int = 1
) -> np.ndarray:
    """A one-dimensional array of integers (integer-valued floats are accepted)."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size < min_len:
        raise ValueError(
            f"{name} must be a one-dimensional sequence with at least {min_len} entries, got shape "
            f"{arr.shape}"
        )
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must contain integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            bad = arr[~np.isfinite(arr) | (arr != np.round(arr))][0]
            raise ValueError(f"{name} must contain integers, got the value {bad!r}")
    out = arr.astype(np.int64)
    if strictly_increasing and np.any(np.diff(out) <= 0):
        i = int(np.argmax(np.diff(out) <= 0))
        raise ValueError(
            f"{name} must be strictly increasing integers, but entry {i + 1} ({out[i + 1]}) "
            f"does not exceed entry {i} ({out[i]})"
        )
    return out


def integer_ratio(name: str, numerator: float, denominator: float, *, what: str) -> int:
    """Return ``numerator / denominator`` as a positive int, or raise a ``ValueError``.

    Used for "β must divide Δf": the ratio must be an integer up to a relative 1e-9 (floating-point
    representations of, say, Δf = 70/194 and β = Δf/8 are not exact). The message suggests the
    nearest valid value of the denominator.
    """
    ratio = numerator / denominator
    k = max(1, int(round(ratio)))
    if abs(ratio - k) > 1e-9 * max(1.0, ratio):
        raise ValueError(
            f"{name} must divide {what} = {numerator!r} (the paper assumes Δf/β is an integer), "
            f"got {name} = {denominator!r} with ratio {ratio!r}; the nearest valid value is "
            f"{name} = {numerator / k!r} (= {what}/{k})"
        )
    return k


def check_int(name: str, value, *, minimum: int) -> int:
    """An integer ≥ ``minimum`` (integer-valued floats are accepted), returned as an ``int``.

    ``TypeError`` for anything that is not an integer, ``ValueError`` below ``minimum``; both name
    the parameter, the allowed range and the value.
    """
    allowed = "a positive integer (>= 1)" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {allowed}, got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return int(value)


def check_size(name: str, size):
    """``None``, a count ≥ 0 or a tuple of counts ≥ 0 (a numpy ``size``), as ``None``, an ``int``
    or a tuple of ``int``; the messages name the parameter, as :func:`check_int`'s do."""
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        return tuple(check_int(f"{name}[{i}]", n, minimum=0) for i, n in enumerate(size))
    return check_int(name, size, minimum=0)


def check_nonnegative(name: str, value) -> float:
    """A finite real number ≥ 0."""
    x = check_real(name, value)
    if not (math.isfinite(x) and x >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return x


def check_optional_positive(name: str, value) -> float | None:
    """``None`` or a finite real number > 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(
            f"{name} must be None or a real number, got {value!r} of type {type(value).__name__}"
        )
    x = float(value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be None or finite and > 0, got {value!r}")
    return x


def check_bool(name: str, value) -> bool:
    """``True`` or ``False`` (numpy booleans accepted)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices: tuple) -> str:
    """One of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        allowed = " or ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return value


def check_finite(name: str, value) -> float:
    """A finite real number."""
    x = check_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return x
