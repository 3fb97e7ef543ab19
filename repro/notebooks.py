"""Executing the chapters and checking that their outputs did not change.

:func:`execute` runs a notebook in place with the repository's ``.venv`` kernel, from the notebook's
folder (as nbval and the book build do), so that it is committed with outputs
(``scripts/nbrun.py``). :func:`output_differences` compares the outputs of a notebook with those of the
same notebook at a git revision, the way nbval compares them: execution counts, cells tagged
``nbval-ignore-output`` and the regexes of ``notebooks/sanitize.cfg`` are ignored; text outputs must be
equal, image outputs are reported separately (``scripts/nbcompare.py``).
"""

from __future__ import annotations

import configparser
import difflib
import json
import os
import re
import subprocess
import time
from pathlib import Path

from .paths import NOTEBOOKS, ROOT

__all__ = [
    "execute",
    "sanitizers",
    "outputs",
    "output_differences",
    "dpdro_cli",
    "wrap_transcript_line",
]


def execute(path: str | Path, timeout: int = 1800) -> float:
    """Execute the notebook at ``path`` in place (cell timeout ``timeout`` s); returns the wall time."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("JUPYTER_DATA_DIR", str(ROOT / ".venv" / "share" / "jupyter"))
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # the kernelspec runs "python": make it the venv's, as tasks.py does
    venv_bin = str(ROOT / ".venv" / "bin")
    if not os.environ.get("PATH", "").startswith(venv_bin):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return time.perf_counter() - t0


def sanitizers(text: str | None = None) -> list[tuple[re.Pattern, str]]:
    """The (regex, replacement) pairs of ``notebooks/sanitize.cfg`` (or of the given file content)."""
    cfg = configparser.ConfigParser()
    cfg.read_string((NOTEBOOKS / "sanitize.cfg").read_text() if text is None else text)
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def outputs(nb: dict, subs=()) -> list[tuple[list, list, list]]:
    """Per code cell: (tags, sanitised text outputs, image outputs) of a notebook given as a JSON dict."""
    def clean(text):
        for regex, rep in subs:
            text = regex.sub(rep, text)
        return text

    res = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        text, images = [], []
        for o in c.get("outputs", []):
            if o["output_type"] == "stream":  # consecutive chunks of one stream are one output (as for nbval)
                chunk = "".join(o["text"])
                if text and text[-1][0] == "stream" and text[-1][1] == o["name"]:
                    text[-1] = ("stream", o["name"], text[-1][2] + chunk)
                else:
                    text.append(("stream", o["name"], chunk))
            elif o["output_type"] in ("execute_result", "display_data"):
                for kind, value in sorted(o["data"].items()):
                    value = "".join(value) if isinstance(value, list) else value
                    if kind.startswith("image/"):
                        images.append((kind, value))
                    else:
                        text.append((o["output_type"], kind, value))
            elif o["output_type"] == "error":
                text.append(("error", o["ename"], o["evalue"]))
        text = [(kind, name, clean(value)) for kind, name, value in text]
        res.append((c.get("metadata", {}).get("tags", []), text, images))
    return res


def output_differences(path: str | Path, rev: str = "HEAD") -> tuple[list[str], int]:
    """The differing text outputs of the notebook at ``path`` against the same notebook at git revision
    ``rev`` (a unified diff per differing cell), and the number of cells whose images differ."""
    rel = Path(path).resolve().relative_to(ROOT).as_posix()
    old = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    subs = sanitizers()
    a, b = outputs(json.loads(old), subs), outputs(json.loads(Path(path).read_text()), subs)
    if len(a) != len(b):
        return [f"{rel}: {len(a)} code cells at {rev}, {len(b)} now"], 0
    diffs, images = [], 0
    for i, ((tags_a, text_a, img_a), (tags_b, text_b, img_b)) in enumerate(zip(a, b)):
        if "nbval-ignore-output" in tags_a or "nbval-ignore-output" in tags_b:
            continue
        if text_a != text_b:
            old_lines = "\n".join(t[2] for t in text_a).splitlines()
            new_lines = "\n".join(t[2] for t in text_b).splitlines()
            diff = "\n".join(difflib.unified_diff(old_lines, new_lines, lineterm="", n=0))
            diffs.append(f"{rel}: code cell {i}:\n{diff}")
        if img_a != img_b:
            images += 1
    return diffs, images


def _break_at(text: str, room: int) -> int:
    """Where a line ``text`` longer than ``room`` is best broken: the index of a space at most
    ``room`` characters in, outside parentheses and brackets, by preference after a clause (``,``,
    ``;``, ``:``) or before a parenthesis or an option (``(``, ``-``), in the second half of the
    line; else after any word but a comparison (``=``, ``>=``...); else the last space; else the
    first space (a word longer than ``room``); -1 if there is none."""
    depth, spaces = 0, []
    for i, ch in enumerate(text[: room + 1]):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == " " and i > 0:
            spaces.append((i, depth))

    def around(i: int) -> tuple[str, str]:
        before = text[:i].rsplit(" ", 1)[-1]
        return before, text[i + 1 :].split(" ", 1)[0]

    comparison = {"=", "<", ">", "<=", ">=", "=="}
    top = [i for i, d in spaces if d == 0]
    clause = [
        i
        for i in top
        if i >= room // 2 and (text[i - 1] in ",;:" or text[i + 1 : i + 2] in ("(", "-"))
    ]
    plain = [i for i in top if not (set(around(i)) & comparison)]
    for choice in (clause, plain, [i for i, _ in spaces]):
        if choice:
            return choice[-1]
    return text.find(" ", 1)


def wrap_transcript_line(line: str, width: int = 80, indent: str = "    ") -> list[str]:
    """A terminal line as lines of at most ``width`` characters, continuation lines indented by
    ``indent``, broken at clause boundaries where it can (:func:`_break_at`): a phrase such as
    ``delta = 0.001`` or ``(1, 0.001)`` stays on one line, and no line ends in an orphan word."""
    out, prefix, rest = [], "", line
    while len(prefix) + len(rest) > width:
        cut = _break_at(rest, width - len(prefix))
        if cut <= 0:
            break
        out.append(prefix + rest[:cut].rstrip())
        prefix, rest = indent, rest[cut + 1 :].lstrip()
    return out + [prefix + rest]


def dpdro_cli(*args: str, cwd: str | Path | None = None) -> int:
    """Run ``dpdro ARGS`` (as ``python -m dpdro``, the same entry point as the console script) in a
    subprocess, the way a reader types it, and print the command line, its stderr (progress,
    warnings, errors) and its stdout, lines longer than the book's 80 columns wrapped at clause
    boundaries (:func:`wrap_transcript_line`; a wrapped command ends its lines in ``\\``, so that
    it pastes into a shell). Returns the exit status."""
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "dpdro", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    command = wrap_transcript_line("$ dpdro " + " ".join(args), width=78)
    lines = [x + " \\" for x in command[:-1]] + command[-1:]  # pasteable: shell continuations
    for line in (out.stderr + out.stdout).rstrip().splitlines():
        lines += wrap_transcript_line(line)
    print("\n".join(lines))
    return out.returncode
