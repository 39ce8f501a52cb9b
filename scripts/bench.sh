#!/usr/bin/env bash
# Every benchmark (make bench), each comparing within one run, as medians and ratios:
#  1. hybridnet against ONNX Runtime on identical models (peer_bench; 1 and 2 threads):
#     ResNet-18, ResNet-50, MobileNet v2 1.0 (224x224), CIFAR ResNet-20, the seed MLP at batch 1
#     and 256 (with the OpenBLAS floor);
#  2. ResNet-50 load + first forward against a baseline build (HN_BENCH_BASELINE, default
#     203d51f: before issue 14 registered ~300 more ops; target <= 1.1x), in fresh processes
#     taking turns;
#  3. the microbenchmarks of bench/ (seed MLP, C API overhead, ResNet-18 eager vs hybridized,
#     ResNet-50 in bfloat16 vs float32, single layers, the profiler's cost on ResNet-50; the Java,
#     Scala, R and Python bindings against the C API);
#  4. one training step (forward + backward) against MXNet 1.9.1 hybridized and PyTorch eager
#     (bench/train_step_bench.py; 1 and 2 threads): ResNet-18 batch 32, CIFAR ResNet-20 batch
#     128, the seed MLP batch 256, a 2-layer LSTM language model; targets <= 0.67x MXNet's step,
#     <= 1.0x PyTorch's, peak memory <= MXNet's; for the seed MLP also its FMA floor (the
#     multiply-adds of the step's matrix products at the CPU's FMA peak) against MXNet's step.
#  5. training epochs (DataLoader, forward, loss, backward, Trainer.step) against MXNet 1.9.1
#     hybridized and PyTorch eager (bench/train_epoch_bench.py; 1 and 2 threads): the digits
#     LeNet and MLP, CIFAR ResNet-20 on random data batch 128; hybridnet's Python loop and its C++
#     loop; targets <= 0.67x MXNet's epoch, <= 1.0x PyTorch's, Python <= 1.1x C++.
#  6. int8 inference against ONNX Runtime (bench/int8_bench.py; 1 and 2 threads): ResNet-50 v1
#     and MobileNet v2 1.0 at batch 1, 224x224, MXNet's quantized export against ORT's
#     quantize_static of the same weights; targets <= 0.9x ORT int8, >= 2.5x faster than fp32.
# The machine is printed with the figures: CPU, OpenBLAS build and kernel setting, oneDNN ISA.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${HN_BENCH_ROUNDS:-9}
models="$build/bench_models"

echo "== machine"
"$build/bin/peer_bench" --describe
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (other processes share them)"

# ---- 1. peers ------------------------------------------------------------------------------------
echo
echo "== hybridnet vs ONNX Runtime (identical weights; $rounds alternating rounds)"
if ort_lib=$(bash "$root/scripts/setup-bench.sh" | tail -n 1) && [ -n "$ort_lib" ]; then
  if [ ! -f "$models/done" ] || [ "$build/bin/make_peer_models" -nt "$models/done" ]; then
    rm -rf "$models"
    "$build/bin/make_peer_models" "$models" "$root/tests/data/mxnet"
    /usr/bin/python3 "$root/bench/peer/onnx_from_mxnet.py" "$models" \
      resnet18_v1=1,3,224,224 resnet50_v1=1,3,224,224 mobilenetv2_1.0=1,3,224,224 \
      cifar_resnet20_v1=1,3,32,32 seed_mlp=1,512 seed_mlp=256,512 2>/dev/null
    touch "$models/done"
  fi
  printf '%-18s %-8s %7s %12s %12s %10s %10s %10s %12s\n' model threads batch "hybridnet ms" \
    "ORT ms" "hn/ORT" "hn/ORT cpu" "fast/ORT" "hn/floor"
  run_peer() {  # name shape threads [extra args]
    local name=$1 shape=$2 threads=$3
    shift 3
    local out
    out=$("$build/bin/peer_bench" --model "$models/$name" \
          --onnx "$models/$name-${shape//,/x}.onnx" --ort-lib "$ort_lib" --shape "$shape" \
          --threads "$threads" --rounds "$rounds" "$@" 2>&1) || { echo "$out"; return 1; }
    echo "$out" | grep -E "^RESULT (check|error)" | sed 's/^RESULT /  /' >&2
    echo "$out" | grep "^SUMMARY" | awk -v name="$name" -v threads="$threads" -v batch="${shape%%,*}" '{
      for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
      ort = v["ort_us"] == "-" ? "-" : sprintf("%.3f", v["ort_us"] / 1000)
      r = v["ratio"] == "-" ? "-" : sprintf("%.3f", v["ratio"])
      c = v["cpu_ratio"] == "-" ? "-" : sprintf("%.3f", v["cpu_ratio"])
      f = v["fast_ratio"] == "-" ? "-" : sprintf("%.3f", v["fast_ratio"])
      fl = v["floor_ratio"] == "-" ? "-" : sprintf("%.3f", v["floor_ratio"])
      printf "%-18s %-8s %7s %12.3f %12s %10s %10s %10s %12s\n", name, threads, batch,
             v["hybridnet_us"] / 1000, ort, r, c, f, fl
    }'
  }
  for threads in 1 2; do
    run_peer resnet18_v1 1,3,224,224 "$threads" --fast-math
    run_peer resnet50_v1 1,3,224,224 "$threads" --fast-math
    run_peer mobilenetv2_1.0 1,3,224,224 "$threads" --fast-math
    run_peer cifar_resnet20_v1 1,3,32,32 "$threads" --fast-math
    run_peer seed_mlp 1,512 "$threads" --floor
    run_peer seed_mlp 256,512 "$threads" --floor
  done
  echo "(hn/ORT: hybridnet / ONNX Runtime, median of the per-round ratios of wall-clock medians;"
  echo " cpu: the same with the process's CPU time; fast/ORT: hybridnet with fast_math;"
  echo " hn/floor: hybridnet / the OpenBLAS floor of the same MLP)"
else
  echo "SKIPPED: ONNX Runtime or PyTorch is not available (scripts/setup-bench.sh said why)"
fi

# ---- 2. load + first forward -------------------------------------------------------------------
echo
baseline=$(git -C "$root" rev-parse --verify -q "${HN_BENCH_BASELINE:-203d51f}^{commit}" || true)
echo "== ResNet-50 v1 load + first forward: this build vs $baseline (fresh processes, in turn)"
base_dir="$build/bench-baseline"
if [ -n "$baseline" ] && [ -f "$models/resnet50_v1-symbol.json" ]; then
  if [ ! -f "$base_dir/lib/libhybridnet.so.0" ] || [ "$(cat "$base_dir/commit" 2>/dev/null)" != "$baseline" ]; then
    rm -rf "$base_dir"
    mkdir -p "$base_dir/src"
    git -C "$root" archive "$baseline" | tar -x -C "$base_dir/src"
    cmake -S "$base_dir/src" -B "$base_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DHN_BUILD_TESTS=OFF -DHN_BUILD_BENCH=OFF -DHN_BUILD_JAVA=OFF -DHN_BUILD_SCALA=OFF \
      -DHN_BUILD_R=OFF > "$base_dir.configure.log" 2>&1
    cmake --build "$base_dir/build" --target hn_c_api > "$base_dir.build.log" 2>&1
    mkdir -p "$base_dir/lib"
    cp -L "$base_dir/build/lib/libhybridnet.so.0" "$base_dir/lib/"
    echo "$baseline" > "$base_dir/commit"
  fi
  new_lib=$(readlink -f "$build/lib/libhybridnet.so.0")
  for i in 1 2 3 4 5 6 7; do
    echo "new $("$build/bin/load_bench" "$new_lib" "$models/resnet50_v1" 1,3,224,224)"
    echo "old $("$build/bin/load_bench" "$base_dir/lib/libhybridnet.so.0" "$models/resnet50_v1" 1,3,224,224)"
  done | awk '
    { t[$1] = t[$1] " " ($3 + $5); l[$1] = l[$1] " " $3; f[$1] = f[$1] " " $5; c[$1] = c[$1] " " ($7 + $9) }
    function median(s,   a, n, i, j, v) {  # insertion sort: POSIX awk has no asort
      n = split(s, a, " ")
      for (i = 2; i <= n; ++i) { v = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > v; --j) a[j + 1] = a[j]; a[j + 1] = v }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
      printf "  this build: load %.0f ms + first forward %.0f ms = %.0f ms, CPU %.0f ms (medians of 7)\n", median(l["new"]), median(f["new"]), median(t["new"]), median(c["new"])
      printf "  baseline:   load %.0f ms + first forward %.0f ms = %.0f ms, CPU %.0f ms\n", median(l["old"]), median(f["old"]), median(t["old"]), median(c["old"])
      r = median(t["new"]) / median(t["old"])
      printf "  ratio %.3f (CPU time: %.3f; target <= 1.1): %s\n", r, median(c["new"]) / median(c["old"]), r <= 1.1 ? "OK" : "ABOVE TARGET"
    }'
else
  echo "SKIPPED: the baseline commit is not in this repository's history (a source tarball),"
  echo "or the peer models were not made"
fi

# ---- 3. microbenchmarks --------------------------------------------------------------------------
for b in mlp_bench capi_overhead_bench resnet_bench bf16_bench layer_bench profiler_bench; do
  printf '\n== %s\n' "$b"
  "$build/bin/$b"
done
# R's predict() and training step against the C API on the seed MLP (bench/r_predict_bench.R,
# bench/r_train_bench.R), when the R package was built.
if [ -d "$build/bindings/r/lib/hybridnet" ]; then
  printf '\n== r_predict_bench\n'
  cmake --build "$build" --target bench_r
  printf '\n== r_train_bench\n'
  cmake --build "$build" --target bench_r_train
else
  printf '\n== r_predict_bench, r_train_bench: not run (no R package built in %s)\n' "$build"
fi
# The Java binding's training step against the C API's (bench/java_train_bench.java), when the
# Java binding was built.
if [ -f "$build/bindings/java/hybridnet.jar" ]; then
  printf '\n== java_train_bench\n'
  cmake --build "$build" --target bench_java_train
else
  printf '\n== java_train_bench: not run (the Java binding is not built in %s)\n' "$build"
fi
# The Scala facade's training step against the C API's (bench/scala/ScalaTrainBench.scala), built
# with Maven as a user's project over the Java and Scala artifacts of this build.
if ! command -v mvn > /dev/null; then
  printf '\n== scala_train_bench: not run (mvn is not installed)\n'
elif [ ! -d "$build/bindings/scala" ] || [ ! -f "$build/bindings/java/hybridnet.jar" ]; then
  printf '\n== scala_train_bench: not run (the Scala binding is not built in %s)\n' "$build"
else
  printf '\n== scala_train_bench\n'
  cmake --build "$build" --target binding_train_bench_c
  "$root/bench/scala/run.sh" "$build"
fi
# The Python package against the C API, PyTorch eager and real MXNet (bench/python_mlp_bench.py).
python="$build/bindings/python/venv/bin/python"
if [ -x "$python" ]; then
  printf '\n== %s\n' python_mlp_bench
  "$python" bench/python_mlp_bench.py "$build"
fi

# ---- 4. training step ----------------------------------------------------------------------------
# Its workers: hybridnet's train_step_worker, MXNet's venv python (scripts/setup-mxnet.sh) and
# Debian's python3 with python3-torch; a missing one is reported as SKIPPED, naming it.
printf '\n== training step: hybridnet vs MXNet 1.9.1 hybridized and PyTorch eager\n'
/usr/bin/python3 "$root/bench/train_step_bench.py" "$build" --rounds "$rounds"

# ---- 5. training epochs --------------------------------------------------------------------------
# Its workers: hybridnet's Python package and train_epoch_worker, MXNet's venv python and Debian's
# python3 with python3-torch (and python3-sklearn for the digits); a missing one is reported.
printf '\n== training epochs: hybridnet (Python and C++) vs MXNet 1.9.1 hybridized and PyTorch eager\n'
/usr/bin/python3 "$root/bench/train_epoch_bench.py" "$build" --rounds "$(( (rounds + 1) / 2 ))"

# ---- 6. int8 inference -------------------------------------------------------------------------
# Its workers: hybridnet's Python package, the ONNX venv (scripts/setup-onnx.sh: onnxruntime with
# onnx, which its quantization needs); the models come from MXNet's venv and PyTorch's ONNX
# exporter; a missing one is reported as SKIPPED.
printf '\n== int8 inference: hybridnet vs ONNX Runtime (quantize_static, QDQ)\n'
bash "$root/scripts/setup-onnx.sh" >&2
/usr/bin/python3 "$root/bench/int8_bench.py" "$build" --rounds "$rounds"
