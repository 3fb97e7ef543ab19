"""The sweep runner: every paper-scale computation as independent, resumable tasks.

A **task family** (:class:`Family`) is one paper-scale computation cut into tasks: a function that lists
the tasks (:class:`Task`: a stable id, its JSON parameters and the file its result goes to), a pure
function ``compute(params) -> dict`` that computes one task's result (JSON-able, including every
released noise so that a reader can re-certify it), and a ``merge`` that assembles the per-task files
into the aggregate file a chapter reads (the formats the chapters already read). The families are listed
in :data:`FAMILIES` (Table 1/4/5/6 cells, both halves of Figure 3, Figures 4 and 5, the monotone
counterexample, chapter 41's curves, Tables 2 and 3 by dataset × chunk of splits); each is defined next
to its computation (``repro.tables``, ``repro.figure3``, …).

:func:`run` executes a list of tasks:

* a task whose result file exists and records the same family, id, parameters and family version is
  *done* and skipped, so a killed run resumes where it stopped (``force=True`` recomputes);
* the others run on an existing engine — joblib with loky processes on this machine (all cores by
  default), or Dask distributed (a ``LocalCluster`` of processes, or the scheduler at an address, e.g.
  one whose workers dask-jobqueue started on a PBS or SLURM cluster); no scheduler of our own;
* each result is written, as soon as it arrives, by this process to its own file with provenance
  (:func:`repro.provenance.provenance` of the worker that computed it) through
  :func:`repro.provenance.write_json_atomic` (a temporary file renamed over the target), so an
  interrupted run never leaves a truncated file;
* a failing task is reported (its id and a one-line error; the traceback goes to the log file) and the
  others go on; a tqdm progress bar shows the tasks done, failed and remaining.

``scripts/sweep.py`` is the command line (:func:`main`); ``book/full_reproduction.md`` explains it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import fnmatch
import importlib
import io
import json
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .paths import RESULTS, ROOT, relative
from .provenance import provenance, read_json, write_json_atomic

__all__ = ["Task", "Family", "Option", "Report", "FAMILIES", "family", "families", "task_dir",
           "is_done", "load_result", "parse_panels", "strip_volatile", "run", "run_families", "merge", "main"]

# the families, in the order `all` runs them: name -> "module:attribute" (imported on first use)
FAMILIES = {
    "tables": "repro.tables:FAMILY",
    "figure3-di": "repro.figure3:FAMILY_DI",
    "figure3-dd": "repro.figure3:FAMILY_DD",
    "figure4": "repro.appendix:FAMILY_FIGURE4",
    "counterexample": "repro.appendix:FAMILY_COUNTEREXAMPLE",
    "figure5": "repro.figure5:FAMILY",
    "optimal-vs-delta": "repro.optimal_vs_delta:FAMILY",
    "table2": "repro.ml_tables:FAMILY_TABLE2",
    "table3": "repro.ml_tables:FAMILY_TABLE3",
}
SCALES = ("paper", "ci")
CI_ROOT = ROOT / "_build" / "sweep-ci"  # where `--scale ci` writes by default (never results/)


# ---------------------------------------------------------------------------------------------- families
@dataclass(frozen=True)
class Task:
    """One unit of work: ``compute(params)`` of its family, stored at ``path``."""

    family: str
    id: str
    params: dict
    path: Path
    version: int = 1

    def record(self) -> dict:
        """What a result file says about the task that produced it (compared to skip finished tasks)."""
        return {"family": self.family, "id": self.id, "params": self.params, "version": self.version}


@dataclass(frozen=True)
class Option:
    """A family option of the command line: ``--name`` with a help text; its default depends on the scale
    and is resolved by the family (``None`` here means "the family's default for the scale")."""

    name: str
    help: str
    type: Callable = str
    flag: bool = False  # a switch without a value (True when given)


@dataclass(frozen=True)
class Family:
    """A paper-scale computation as tasks.

    ``list_tasks(root, scale, options) -> [Task]`` lists the tasks (results under ``root``; ``options``
    the family's :class:`Option` values, ``None`` when not given); ``compute(params) -> dict`` computes
    one task's result (a pure function of the parameters, importable by worker processes);
    ``merge(root, tasks, scale, options) -> [Path]`` writes the aggregate files from the per-task files,
    or is None when the per-task files are what the chapter reads; ``partial_merge``: merge is called
    even when some tasks are not done (it then writes what is complete); ``prepare(tasks)`` runs once in
    this process before tasks are dispatched (e.g. fill a cache the tasks read); ``version`` is part of
    every task's identity (raise it when ``compute`` changes, to recompute stored results);
    ``sort_keys``: the result files' key order.
    """

    name: str
    title: str
    list_tasks: Callable[..., list]
    compute: Callable[[dict], dict]
    merge: Callable[..., list] | None = None
    options: tuple = ()
    version: int = 1
    partial_merge: bool = False
    prepare: Callable[[list], None] | None = None
    sort_keys: bool = False

    def task(self, id: str, params: dict, path: Path) -> Task:
        """A task of this family (parameters normalised through JSON, as they are stored)."""
        return Task(self.name, id, json.loads(json.dumps(params)), Path(path), self.version)

    def tasks(self, root: Path | str = RESULTS, scale: str = "paper", options: dict | None = None) -> list[Task]:
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        known = {o.name for o in self.options}
        opts = {k: v for k, v in (options or {}).items() if k in known}
        return self.list_tasks(Path(root), scale, {o.name: opts.get(o.name) for o in self.options})


def family(name: str) -> Family:
    """The family registered under ``name`` in :data:`FAMILIES`."""
    if name not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}")
    module, attr = FAMILIES[name].split(":")
    return getattr(importlib.import_module(module), attr)


def families() -> list[Family]:
    return [family(n) for n in FAMILIES]


def task_dir(root: Path | str, family_name: str) -> Path:
    """Folder of a family's per-task files when the chapter reads an aggregate: ``<root>/sweep/<family>``."""
    return Path(root) / "sweep" / family_name


def load_result(task: Task) -> dict | None:
    """The stored result of ``task`` if its file exists, parses and records this very task, else None."""
    try:
        data = read_json(task.path)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("task") != task.record():
        return None
    return data


def is_done(task: Task) -> bool:
    return load_result(task) is not None


def parse_panels(text: str | None, default: list) -> list:
    """A ``--panels`` option, ``"eps:delta,..."``, as a list of (ε, δ); ``default`` when not given."""
    if not text:
        return default
    try:
        return [tuple(float(v) for v in item.split(":", 1)) for item in text.split(",") if item]
    except ValueError:
        raise ValueError(f"panels must be 'eps:delta,...', got {text!r}") from None


VOLATILE = ("provenance", "provenance_lower", "meta")


def strip_volatile(data: Any) -> Any:
    """``data`` without what changes from one identical run to the next: provenance records and every
    key that holds wall-clock time or machine load (``*seconds*``, ``load_average*``, ``cumulative_*``),
    and the reached-time entries derived from them. For comparing runs."""
    if isinstance(data, dict):
        return {k: strip_volatile(v) for k, v in data.items()
                if k not in VOLATILE and "seconds" not in k and not k.startswith(("load_average", "cumulative"))
                and k != "reached"}
    if isinstance(data, list):
        return [strip_volatile(v) for v in data]
    return data


# ---------------------------------------------------------------------------------------------- workers
def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _max_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: kilobytes


def execute(compute: Callable[[dict], dict], params: dict, index: int, command: str) -> tuple:
    """Run one task in a worker: ``(index, "ok", result, output)`` or ``(index, "failed", one-line error,
    traceback and output)``; ``output`` is what the task printed (kept for the log, off the terminal).
    The result gets the worker's provenance: host, versions, wall-clock seconds, the 1-minute load
    average at the start and the worker process's peak resident memory so far (``max_rss_mb``, an upper
    bound on the task's own)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    t0 = time.perf_counter()
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            result = compute(params)
        if not isinstance(result, dict):
            raise TypeError(f"a task must return a dict, got {type(result).__name__}")
        seconds = time.perf_counter() - t0
        result["provenance"] = provenance(seconds, command=command, worker_pid=os.getpid(),
                                          load_average_1min_start=None if load is None else round(load, 2),
                                          max_rss_mb=_max_rss_mb())
        return index, "ok", result, buf.getvalue()
    except Exception as exc:  # reported per task; the sweep goes on
        return index, "failed", _one_line(exc), traceback.format_exc() + buf.getvalue()


@dataclass
class Report:
    """What a :func:`run` did: tasks found done, computed now, failed (id, one-line error), not run."""

    total: int = 0
    skipped: list = field(default_factory=list)
    computed: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    not_run: list = field(default_factory=list)
    seconds: float = 0.0
    log: Path | None = None
    merged: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.not_run


def _joblib_outcomes(calls: list, jobs: int | None) -> Iterator[tuple]:
    from joblib import Parallel, delayed

    n_jobs = -1 if jobs is None else jobs
    parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered", batch_size=1)
    yield from parallel(delayed(execute)(*c) for c in calls)


def _dask_outcomes(calls: list, jobs: int | None, scheduler: str | None, say: Callable) -> Iterator[tuple]:
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        client = Client(scheduler)
        say(f"dask: connected to {scheduler} ({len(client.scheduler_info()['workers'])} workers now)")
    else:
        n = jobs or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        say(f"dask: LocalCluster with {n} worker processes")
    try:
        stamp = f"{os.getpid()}-{time.time_ns()}"
        futures = {}
        for i, c in enumerate(calls):
            fut = client.submit(execute, *c, key=f"sweep-{c[2]}-{stamp}", pure=False, priority=len(calls) - i,
                                retries=0)
            futures[fut] = c[2]
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as exc:  # the worker died (memory, killed): report the task, go on
                yield futures[fut], "failed", f"worker lost: {_one_line(exc)}", traceback.format_exc()
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run(tasks: Sequence[Task], *, jobs: int | None = None, dask: bool = False, scheduler: str | None = None,
        force: bool = False, dry_run: bool = False, log: Path | str | None = None, progress: bool = True,
        command: str | None = None, out=None, registry: dict | None = None) -> Report:
    """Compute the tasks not yet done (all of them with ``force``) and write each result to its file.

    ``jobs``: worker processes (joblib/loky; default all cores; 1 runs in this process). ``dask=True``:
    a Dask ``LocalCluster`` of ``jobs`` processes instead; ``scheduler``: the address of a running Dask
    scheduler, or a Dask cluster object (its workers do the work: ``jobs`` is ignored). ``dry_run``: only list what would run.
    ``log``: file that gets one line per task and the traceback of every failure. ``out``: where the
    messages go (default stderr). ``registry``: families by name that are not in :data:`FAMILIES`
    (their ``compute`` must be importable by the workers, or ``jobs=1``).
    """
    lookup = lambda name: (registry or {}).get(name) or family(name)  # noqa: E731
    out = out or sys.stderr
    say = lambda msg: print(msg, file=out, flush=True)  # noqa: E731
    if command is None:
        command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
    ids = [(t.family, t.id) for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids must be unique within a family")
    t_start = time.perf_counter()
    report = Report(total=len(tasks))
    todo = []
    for t in tasks:
        (todo if force or not is_done(t) else report.skipped).append(t)
    if dry_run:
        for t in todo:
            say(f"would run  {t.family}/{t.id}  {json.dumps(t.params, sort_keys=True)}  -> {relative(t.path)}")
        say(f"{len(tasks)} tasks: {len(report.skipped)} done, {len(todo)} to run")
        report.not_run = list(todo)
        return report
    if not todo:
        report.seconds = time.perf_counter() - t_start
        say(f"{len(tasks)} tasks: all done already")
        return report
    fams = {name: lookup(name) for name in dict.fromkeys(t.family for t in todo)}
    for name, fam in fams.items():
        if fam.prepare is not None:
            fam.prepare([t for t in todo if t.family == name])
    computes = {name: fam.compute for name, fam in fams.items()}
    sort_keys = {name: fam.sort_keys for name, fam in fams.items()}
    calls = [(computes[t.family], t.params, i, command) for i, t in enumerate(todo)]
    log_path = Path(log) if log is not None else None
    logf = None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        logf = open(log_path, "a", encoding="utf-8")
        report.log = log_path

    def write_log(line: str) -> None:
        if logf is not None:
            logf.write(line.rstrip("\n") + "\n")
            logf.flush()

    now = lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")  # noqa: E731
    engine = f"dask scheduler {scheduler}" if scheduler else "dask LocalCluster" if dask else "joblib (loky)"
    write_log(f"{now()} start on {socket.gethostname()}: {command} | {len(tasks)} tasks, {len(report.skipped)} "
              f"done, {len(todo)} to run, engine {engine}, jobs {jobs or 'all cores'}")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(report.skipped), unit="task", file=out, dynamic_ncols=True,
                   desc="sweep", mininterval=0.5)
        bar.set_postfix(failed=0, left=len(todo))

    def emit(msg: str) -> None:
        if bar is not None:
            bar.write(msg, file=out)
        else:
            say(msg)

    pending = set(range(len(todo)))
    try:
        outcomes = (_dask_outcomes(calls, jobs, scheduler, emit) if (dask or scheduler)
                    else _joblib_outcomes(calls, jobs))
        for index, status, payload, tb in outcomes:
            task = todo[index]
            pending.discard(index)
            if status == "ok":
                payload["task"] = task.record()
                try:
                    write_json_atomic(task.path, payload, sort_keys=sort_keys[task.family])
                except (TypeError, ValueError, OSError) as exc:  # e.g. a result that is not JSON
                    status, payload, tb = "failed", f"cannot store the result: {_one_line(exc)}", \
                        traceback.format_exc()
            if status == "ok":
                report.computed.append(task)
                prov = payload["provenance"]
                write_log(f"{now()} ok     {task.family}/{task.id} ({prov.get('seconds')} s, "
                          f"{prov.get('max_rss_mb')} MB on {prov.get('host')})" + (f"\n{tb}" if tb else ""))
            else:
                report.failed.append((task, payload))
                emit(f"FAILED {task.family}/{task.id}: {payload}")
                write_log(f"{now()} FAILED {task.family}/{task.id}: {payload}\n{tb}")
            if bar is not None:
                bar.set_postfix(failed=len(report.failed), left=len(pending), refresh=False)
                bar.update(1)
    except Exception as exc:  # the engine itself failed (e.g. a loky worker killed): keep what was written
        emit(f"the engine stopped: {_one_line(exc)}; {len(pending)} tasks not run (run again to resume)")
        write_log(f"{now()} ENGINE STOPPED: {traceback.format_exc()}")
    finally:
        if bar is not None:
            bar.close()
        report.not_run = [todo[i] for i in sorted(pending)]
        report.seconds = time.perf_counter() - t_start
        write_log(f"{now()} end: {len(report.computed)} computed, {len(report.failed)} failed, "
                  f"{len(report.not_run)} not run, {len(report.skipped)} skipped, {report.seconds:.1f} s")
        if logf is not None:
            logf.close()
    return report


def merge(fam: Family, root: Path | str, tasks: Sequence[Task], scale: str, options: dict,
          say: Callable = print) -> list[Path]:
    """Write ``fam``'s aggregate files from its per-task files (``tasks``: all tasks of the family at this
    scale). Skipped, with a message, while tasks are missing, unless the family merges partially."""
    if fam.merge is None:
        return []
    missing = [t for t in tasks if not is_done(t)]
    if missing and not fam.partial_merge:
        say(f"{fam.name}: merge skipped, {len(missing)} of {len(tasks)} tasks not done "
            f"(first: {missing[0].id})")
        return []
    paths = fam.merge(Path(root), list(tasks), scale, {o.name: options.get(o.name) for o in fam.options})
    for p in paths:
        say(f"{fam.name}: wrote {relative(p)}")
    return paths


def run_families(names: Sequence[str], *, root: Path | str | None = None, scale: str = "paper",
                 options: dict | None = None, only: Sequence[str] = (), merge_only: bool = False,
                 no_merge: bool = False, out=None, **kw) -> Report:
    """List the tasks of the named families, :func:`run` them (one engine, one progress bar) and merge
    the aggregate files of each family that got new results (of every family with ``merge_only``).
    ``only``: glob patterns on ``family/id`` selecting tasks."""
    out = out or sys.stderr
    say = lambda msg: print(msg, file=out, flush=True)  # noqa: E731
    root = Path(root) if root is not None else (RESULTS if scale == "paper" else CI_ROOT)
    options = dict(options or {})
    fams = [family(n) for n in names]
    listed = {f.name: f.tasks(root, scale, options) for f in fams}
    selected = [t for f in fams for t in listed[f.name]
                if not only or any(fnmatch.fnmatchcase(f"{t.family}/{t.id}", pat) for pat in only)]
    if merge_only:
        report = Report(total=len(selected), skipped=[t for t in selected if is_done(t)])
    else:
        report = run(selected, out=out, **kw)
        if kw.get("dry_run"):
            return report
    if not no_merge:
        computed = {t.family for t in report.computed}
        for f in fams:
            if f.merge is None:
                continue
            if merge_only or f.name in computed:
                report.merged += merge(f, root, listed[f.name], scale, options, say)
            else:
                say(f"{f.name}: no new results, aggregate files left as they are (--merge-only rewrites them)")
    return report


# ---------------------------------------------------------------------------------------------- command line
def _parser(prog: str = "sweep.py", fixed: Sequence[str] | None = None,
            description: str | None = None) -> argparse.ArgumentParser:
    """The command line; ``fixed``: the families are given (a script for one computation), so there is no
    FAMILY argument and only their options are offered."""
    ap = argparse.ArgumentParser(
        prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
        description=description or (
            "Run paper-scale computations as resumable tasks on joblib (this machine) or Dask (a cluster), "
            "write one result file per task, then the aggregate files the chapters read.\nFamilies: "
            + ", ".join(FAMILIES) + ";\n'all' is every family, 'list' prints each family's tasks done and to run."),
        epilog=None if fixed else (
            "examples:\n  sweep.py list\n  sweep.py tables --dry-run\n  sweep.py all --jobs 2\n"
            "  sweep.py table3 --datasets adult --chunk 1 --scheduler tcp://HOST:8786\n"
            "  sweep.py all --scale ci --dask"))
    if not fixed:
        ap.add_argument("families", nargs="+", metavar="FAMILY", help="family names, 'all' or 'list'")
    g = ap.add_argument_group("scale and files")
    g.add_argument("--scale", choices=SCALES, default="paper",
                   help="paper: the paper's instances (default); ci: a tiny instance of every task family")
    g.add_argument("--root", type=Path, default=None,
                   help=f"results folder (default: {relative(RESULTS)}/ at paper scale, "
                        f"{relative(CI_ROOT)}/ at ci scale)")
    g.add_argument("--only", action="append", default=[], metavar="GLOB",
                   help="run only tasks whose FAMILY/ID matches (repeatable), e.g. 'tables/l1_eps=1_*'")
    g.add_argument("--force", action="store_true", help="recompute tasks whose result is stored")
    g.add_argument("--dry-run", action="store_true", help="list the tasks that would run and exit")
    g.add_argument("--merge-only", action="store_true", help="only assemble the aggregate files")
    g.add_argument("--no-merge", action="store_true", help="do not assemble the aggregate files")
    g.add_argument("--log", type=Path, default=None,
                   help="log file (default: <root>/sweep/logs/<UTC time>.log): a line per task, tracebacks")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    e = ap.add_argument_group("engine (joblib on this machine by default)")
    e.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: all cores; with --dask the LocalCluster's workers)")
    e.add_argument("--dask", action="store_true", help="use a Dask LocalCluster (processes) instead of joblib")
    e.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="address of a running Dask scheduler, e.g. tcp://10.0.0.1:8786 (its workers, started "
                        "e.g. by dask-jobqueue's PBSCluster or SLURMCluster, do the work)")
    seen: dict = {}
    for name in (fixed or FAMILIES):
        fam = family(name)
        grp = None
        for o in fam.options:
            if o.name in seen:
                seen[o.name].append(name)
                continue
            seen[o.name] = [name]
            grp = grp or ap.add_argument_group(f"{name}: {fam.title}")
            flag = f"--{o.name.replace('_', '-')}"
            if o.flag:
                grp.add_argument(flag, dest=o.name, action="store_const", const=True, default=None, help=o.help)
            else:
                grp.add_argument(flag, dest=o.name, type=o.type, default=None, help=o.help)
    ap.set_defaults(_option_families=seen, families=list(fixed or []))
    return ap


def _list(names: Sequence[str], root: Path | None, scale: str, options: dict) -> None:
    root = Path(root) if root is not None else (RESULTS if scale == "paper" else CI_ROOT)
    print(f"{'family':18s} {'tasks':>6s} {'done':>6s} {'to run':>7s}  what")
    for name in names:
        fam = family(name)
        tasks = fam.tasks(root, scale, options)
        done = sum(is_done(t) for t in tasks)
        print(f"{name:18s} {len(tasks):6d} {done:6d} {len(tasks) - done:7d}  {fam.title}")


def main(argv: Sequence[str] | None = None, *, prog: str = "sweep.py", families: Sequence[str] | None = None,
         description: str | None = None) -> int:
    """``scripts/sweep.py``: exit status 0 when every task is done, 1 when some failed or did not run, 2
    for bad arguments. ``families``: run these (a script for one computation; no FAMILY argument)."""
    ap = _parser(prog, families, description)
    args = ap.parse_args(argv)
    names = args.families
    listing = names[0] == "list"
    if listing:
        names = names[1:] or ["all"]
    if "all" in names:
        names = list(FAMILIES)
    bad = [n for n in names if n not in FAMILIES]
    if bad:
        ap.error(f"unknown family {bad[0]!r}; choose from {', '.join(FAMILIES)}, all, list")
    names = list(dict.fromkeys(names))
    options = {k: v for k, v in vars(args).items()
               if k in args._option_families and v is not None}
    for opt in options:
        if not set(args._option_families[opt]) & set(names):
            ap.error(f"--{opt.replace('_', '-')} applies to {', '.join(args._option_families[opt])}, "
                     f"not to {', '.join(names)}")
    if args.dask and args.scheduler:
        ap.error("give either --dask (a local cluster) or --scheduler ADDRESS, not both")
    try:
        if listing:
            _list(names, args.root, args.scale, options)
            return 0
        root = args.root if args.root is not None else (RESULTS if args.scale == "paper" else CI_ROOT)
        log = args.log
        if log is None and not args.dry_run and not args.merge_only:
            stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            log = Path(root) / "sweep" / "logs" / f"{stamp}-{os.getpid()}.log"
        report = run_families(names, root=root, scale=args.scale, options=options, only=args.only,
                              merge_only=args.merge_only, no_merge=args.no_merge, jobs=args.jobs, dask=args.dask,
                              scheduler=args.scheduler, force=args.force, dry_run=args.dry_run, log=log,
                              progress=not args.no_progress)
    except ValueError as exc:  # bad option values: one line, exit status 2
        print(f"sweep.py: error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        return 0
    print(f"{report.total} tasks: {len(report.skipped)} already done, {len(report.computed)} computed, "
          f"{len(report.failed)} failed, {len(report.not_run)} not run ({report.seconds:.1f} s)"
          + (f"; log {relative(report.log)}" if report.log else ""), file=sys.stderr)
    for task, err in report.failed:
        print(f"  failed: {task.family}/{task.id}: {err}", file=sys.stderr)
    return 0 if report.ok else 1
