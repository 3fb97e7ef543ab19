#!/usr/bin/env bash
# The "(OPT)" columns of Tables 2 and 3 recomputed at 100 x 1,000 with the same seeds (the other
# columns stay as stored): `scripts/sweep.py table3|table2 --dd-only`, on a machine with one NVIDIA
# GPU and 16 cores. Table 3 (coordinate descent on the GPU: backend "cupy", chosen at run time) and,
# at the same time, the Table 2 tasks not yet done (naive Bayes, CPU only). Both stop after T
# seconds; a stopped run resumes on the next one (finished tasks are skipped). The per-task
# files go into $OUT/opt_rerun.tar.gz (refreshed every 30 s); merge them in the repository with
#   tar xzf opt_rerun.tar.gz && python3 scripts/sweep.py table2 table3 --dd-only --splits 100 \
#       --sims 1000 --merge-only
# Usage: bash scripts/device_opt_rerun.sh [sweep.py options, e.g. --splits 1 --sims 5 --root DIR]
# Environment: PYTHON (python3), JOBS3 (10), JOBS2 (10), T (420 s), OUT (_build/out).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-_build/out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
for m in highspy scipy joblib; do  # what the sweep needs beyond numpy, numba and cupy
    "$PY" -c "import $m" 2>/dev/null || "$PY" -m pip install -q --no-index --find-links .whl "$m"
done
"$PY" -c "import highspy, joblib; from repro.experiments import pcd_device; print(pcd_device())"
ROOT=results
prev=""
for a in "$@"; do [ "$prev" = "--root" ] && ROOT=$a; prev=$a; done
pack() {
    find "$ROOT/sweep/table2" "$ROOT/sweep/table3" -path '*/dd_only/*.json' 2>/dev/null \
        | tar czf "$OUT/opt_rerun.tar.gz.tmp" -T - "$ROOT/sweep/logs" 2>/dev/null
    mv -f "$OUT/opt_rerun.tar.gz.tmp" "$OUT/opt_rerun.tar.gz"
}
(while sleep 30; do pack; done) &
packer=$!
sweep() {  # TABLE JOBS SECONDS [options]
    local t=$1 jobs=$2 secs=$3
    shift 3
    local t0=$SECONDS
    timeout --kill-after=15 "$secs" "$PY" scripts/sweep.py "table$t" --dd-only --splits 100 \
        --sims 1000 --chunk 10 --jobs "$jobs" --no-progress --no-merge "$@"
    echo "table $t: exit $?, $((SECONDS - t0)) s"
}
sweep 3 "${JOBS3:-10}" "${T:-420}" "$@" &
p3=$!
sweep 2 "${JOBS2:-10}" "${T:-420}" "$@" &
wait "$p3" $!
kill "$packer" 2>/dev/null
pack
"$PY" scripts/sweep.py list table2 table3 --dd-only --splits 100 --sims 1000 "$@" 2>/dev/null
ls -l "$OUT/opt_rerun.tar.gz"
