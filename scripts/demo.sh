#!/usr/bin/env bash
# The main job: the seed walkthrough (build a model, run eagerly, hybridize, benchmark, export,
# import), then the benchmark table and the files it wrote, read back by the CLI.
set -euo pipefail
build=${1:-build}
fixtures=${HN_FIXTURES_DIR:-../shared/fixtures/mxnet}
out="$build/demo"
mkdir -p "$out"

step() { printf '\n==== %s\n' "$*"; }

step "Seed walkthrough (examples/cpp/seed_walkthrough.cc)"
"$build/bin/seed_walkthrough" --out "$out"

step "The exported files, read back by the CLI"
"$build/bin/hybridnet" info "$out/seed_mlp-symbol.json" --shape data=1,512
"$build/bin/hybridnet" info "$out/seed_mlp-0000.params"

if [ -d "$fixtures" ]; then
  step "A file written by MXNet itself (GluonCV cifar_resnet20_v1)"
  "$build/bin/hybridnet" info "$fixtures/cifar_resnet20_v1-symbol.json" --shape data=1,3,32,32 | head -n 4
fi

step "Benchmark: seed MLP, eager vs hybridized vs the OpenBLAS floor (medians, one run)"
"$build/bin/mlp_bench" 2>&1 | sed -n '/^OpenBLAS/p;/^note/p;/^medians/,$p'
