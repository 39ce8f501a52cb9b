#!/usr/bin/env bash
# Every benchmark in bench/, one after another (medians and ratios within each run).
set -euo pipefail
build=${1:-build}
for b in "$build"/bin/*_bench; do
  printf '\n== %s\n' "$(basename "$b")"
  "$b"
done
# The Python package against the C API, PyTorch eager and real MXNet (bench/python_mlp_bench.py).
python="$build/bindings/python/venv/bin/python"
if [ -x "$python" ]; then
  printf '\n== %s\n' python_mlp_bench
  "$python" bench/python_mlp_bench.py "$build"
fi
