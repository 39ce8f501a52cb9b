#!/usr/bin/env bash
# Every benchmark in bench/, one after another (medians and ratios within each run).
set -euo pipefail
build=${1:-build}
for b in "$build"/bin/*_bench; do
  printf '\n== %s\n' "$(basename "$b")"
  "$b"
done
# R's predict() against the C API on the seed MLP (bench/r_predict_bench.R), when the R package
# was built.
if [ -d "$build/bindings/r/lib/hybridnet" ]; then
  printf '\n== r_predict_bench\n'
  cmake --build "$build" --target bench_r
else
  printf '\n== r_predict_bench: not run (the R package is not built in %s)\n' "$build"
fi
# The Python package against the C API, PyTorch eager and real MXNet (bench/python_mlp_bench.py).
python="$build/bindings/python/venv/bin/python"
if [ -x "$python" ]; then
  printf '\n== %s\n' python_mlp_bench
  "$python" bench/python_mlp_bench.py "$build"
fi
