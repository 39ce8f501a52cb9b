#!/usr/bin/env bash
# Every benchmark in bench/, one after another (medians and ratios within each run).
set -euo pipefail
build=${1:-build}
for b in "$build"/bin/*_bench; do
  printf '\n== %s\n' "$(basename "$b")"
  "$b"
done
