#!/usr/bin/env bash
# The main job: what hybridnet does, end to end, on this machine.
set -euo pipefail
build=${1:-build}
fixtures=${HN_FIXTURES_DIR:-../shared/fixtures/mxnet}
cli="$build/bin/hybridnet"

step() { printf '\n== %s\n' "$*"; }

if [ -d "$fixtures" ]; then
  step "MXNet files read by hybridnet ($fixtures)"
  "$cli" info "$fixtures/cifar_resnet20_v1-symbol.json" --shape data=1,3,32,32 | head -n 6
  "$cli" info "$fixtures/mnist-lenet-0-0010.params"
  "$cli" info "$fixtures/legacy_ndarray.v0" | head -n 4
  out=$(mktemp -d)
  "$cli" convert "$fixtures/save_000800.json" "$out/save_000800-upgraded.json"
  "$cli" info "$out/save_000800-upgraded.json"
  rm -rf "$out"
else
  echo "fixtures not found at $fixtures (set HN_FIXTURES_DIR); skipping the file tour"
fi

step "Seed MLP 512-256-128-2: eager vs graph executor vs OpenBLAS floor"
"$build/bin/mlp_bench" --benchmark_format=console 2>&1 | sed -n '/^OpenBLAS/p;/^note/p;/^medians/,$p'
