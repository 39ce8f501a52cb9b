#!/usr/bin/env bash
# Cross-language model portability (CTest cross_language.portability):
#   1. the seed MLP (512 -> 256 -> 128 -> 2) is exported with the same seed from C++ (xlang_cpp),
#      Java (XlangExport.java via hybridnet.jar), R (xlang_export.R via the installed package)
#      and Python (xlang_export.py via the installed wheel): the -symbol.json files and the
#      -0000.params files must be byte-identical;
#   2. those exports and the seed walkthrough's (examples/cpp) are loaded from C (xlang_c, the C
#      API), C++ (xlang_cpp, the core), Java (examples/java Predict), Scala (examples/scala
#      Predict, built by Maven against the installed hybridnet-scala_2.13), R
#      (examples/r/predict.R) and Python (examples/python/predict.py), all fed the same .npy:
#      every output must be bit-identical;
#      The models MXNet itself wrote (FIXTURES: GluonCV cifar_resnet20_v1/v2), when present, are
#      loaded from every language too, and so is the LeNet examples/python/train_digits.py
#      trains and exports (2 epochs), whose outputs must also be bit-identical to those of the
#      trained Python network;
#   3. real MXNet 1.9.1, when importable, runs the same files: within 1e-5 (else a SKIP line);
#   4. GluonCV / GluonNLP models real MXNet exported (CTest golden.models writes them to
#      GLUON_MODELS with their inputs and MXNet's outputs): multi-output detectors, a small
#      two-input gluon network and BERT (three inputs) loaded from every language, every output
#      bit-identical to C++'s and within 1e-4 of MXNet's. Without MXNet, GluonCV or GluonNLP
#      there are no exports: a SKIP line.
#
#   run.sh WORK SRC XLANG_CPP XLANG_C SEED_WALKTHROUGH JAVA JAR EXAMPLES_JAR RSCRIPT R_LIBS MVN PYTHON
#          FIXTURES HN_PYTHON [GLUON_MODELS]
# PYTHON runs real MXNet; HN_PYTHON is the Python with the hybridnet wheel installed.
# An empty JAVA/RSCRIPT/MVN/PYTHON/HN_PYTHON ("-") means that language is not built: the run
# fails, except for MVN (Scala is then skipped with its reason) and PYTHON (MXNet skipped).
set -euo pipefail
# Every program here runs one thread, as the C++ reference (xlang_cpp) does: products on OpenBLAS
# (AVX2 CPUs) can differ in the last bit between thread counts.
export OMP_NUM_THREADS=1
work=$1 src=$2 xcpp=$3 xc=$4 seedw=$5 java=$6 jar=$7 exjar=$8 rscript=$9 rlibs=${10} mvn=${11} py=${12}
fixtures=${13:-} hnpy=${14:--}
gluon_models=${15:-}
# The exported models every language loads (tests/golden/zoo/gluon_models.py names them).
xlang_models="yolo3_mobilenet0.25_voc center_net_resnet18_v1b_voc image_and_features bert_2layer"

rm -rf "$work"
mkdir -p "$work/exports" "$work/out"
cd "$work"
fail=0
note() { printf '%s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }
for tool in "$java" "$rscript" "$hnpy"; do
  [ "$tool" != "-" ] || { echo "FAIL: Java, R and Python must be built (HN_BUILD_JAVA, HN_BUILD_R, HN_BUILD_PYTHON)"; exit 1; }
done

"$xcpp" random x.npy 7 3 512
"$xcpp" random x_img.npy 9 2 3 32 32
seed=42

# ---- 1. the same model, the same seed, three languages: byte-identical files -----------------
"$xcpp" export exports/cpp 42 x.npy
"$java" -cp "$jar" "$src/tests/cross_language/XlangExport.java" exports/java "$seed" x.npy
R_LIBS=$rlibs "$rscript" "$src/tests/cross_language/xlang_export.R" exports/r "$seed" x.npy
"$hnpy" "$src/tests/cross_language/xlang_export.py" exports/python "$seed" x.npy
"$seedw" --out exports > exports/walkthrough.log
"$hnpy" "$src/examples/python/train_digits.py" --epochs 2 --export exports/digits > exports/digits.log
mv exports/seed_mlp-symbol.json exports/walkthrough-symbol.json
mv exports/seed_mlp-0000.params exports/walkthrough-0000.params
for other in java r python; do
  for file in -symbol.json -0000.params; do
    if cmp -s "exports/cpp$file" "exports/$other$file"; then
      note "ok   exports/cpp$file == exports/$other$file (byte-identical)"
    else
      bad "exports/cpp$file and exports/$other$file differ"
    fi
  done
done

# ---- 2. every export loaded in every language ------------------------------------------------
scala_cp=""
if [ "$mvn" = "-" ]; then
  note "SKIP Scala: mvn not found, the Scala binding is not built"
elif [ ! -d "${HOME:-/nonexistent}/.m2/repository/org/hybridnet/hybridnet-scala_2.13" ]; then
  note "SKIP Scala: org.hybridnet:hybridnet-scala_2.13 is not in ~/.m2 (CTest scala.munit installs it)"
else
  "$mvn" -B -q -ntp -Dstyle.color=never -f "$src/examples/scala/pom.xml" \
    -Dhybridnet.maven.dir="$work/scala-maven" package dependency:build-classpath \
    -Dmdep.outputFile="$work/scala-cp.txt" -Dmdep.includeScope=runtime > scala-build.log 2>&1 \
    || { cat scala-build.log; bad "examples/scala did not build"; }
  [ -f scala-cp.txt ] && scala_cp="$(cat scala-cp.txt):$work/scala-maven/classes"
fi

loaders="C++ C Java R Python"
[ -n "$scala_cp" ] && loaders="C++ C Java Scala R Python"
load() {  # LANGUAGE PREFIX INPUT OUT
  case $1 in
    C) "$xc" "$2" 0 "$3" "$4" ;;
    C++) "$xcpp" run "$2" 0 "$3" "$4" ;;
    Java) "$java" -cp "$jar:$exjar" Predict "$2" 0 "$3" "$4" ;;
    Scala) "$java" -cp "$scala_cp" Predict "$2" 0 "$3" "$4" ;;
    R) R_LIBS=$rlibs "$rscript" "$src/examples/r/predict.R" "$2" 0 "$3" "$4" ;;
    Python) "$hnpy" "$src/examples/python/predict.py" "$2" 0 "$3" "$4" ;;
  esac > /dev/null
}
# name prefix input
exports=("cpp exports/cpp x.npy" "java exports/java x.npy" "r exports/r x.npy"
         "python exports/python x.npy" "walkthrough exports/walkthrough x.npy"
         "digits exports/digits exports/digits-x.npy")
mxnet_pairs=()
for model in cifar_resnet20_v1 cifar_resnet20_v2; do
  if [ ! -f "$fixtures/$model-symbol.json" ]; then
    note "FAIL $model: $fixtures/$model-symbol.json is missing"
    exit 1
  fi
  exports+=("$model $fixtures/$model x_img.npy")
  mxnet_pairs+=("$fixtures/$model=out/${model}_C++.npy")
done
printf '\n%-18s' "export"; for l in $loaders; do printf '%-8s' "$l"; done; printf '\n'
for entry in "${exports[@]}"; do
  read -r e prefix input <<< "$entry"
  printf '%-18s' "$e"
  for l in $loaders; do
    out="out/${e}_$l.npy"
    if ! load "$l" "$prefix" "$input" "$out"; then
      printf '%-8s' "ERROR"; fail=1; continue
    fi
    ref="out/${e}_C++.npy"
    if "$xcpp" same "$ref" "$out" > /dev/null; then printf '%-8s' "same"; else printf '%-8s' "DIFFERS"; fail=1; fi
  done
  printf '\n'
done
for e in java r python; do
  "$xcpp" same out/cpp_C++.npy "out/${e}_C++.npy" || bad "the $e export computes differently"
done
"$xcpp" same exports/digits-y.npy out/digits_C++.npy \
  || bad "the digits export computes differently from the Python network that trained it"
[ $fail = 0 ] && note "all outputs bit-identical (reference: each export loaded by C++)"

# ---- 3. real MXNet on the same files ---------------------------------------------------------
if [ "$py" = "-" ]; then
  note "SKIP MXNet: no Python interpreter"
else
  set +e
  "$py" "$src/tests/cross_language/xlang_mxnet.py" x.npy \
    "exports/cpp=out/cpp_C++.npy" "exports/java=out/java_Java.npy" "exports/r=out/r_R.npy" \
    "exports/python=out/python_Python.npy" \
    "exports/walkthrough=out/walkthrough_C++.npy" \
    ${mxnet_pairs[@]+"--input" x_img.npy "${mxnet_pairs[@]}"} \
    --input exports/digits-x.npy "exports/digits=out/digits_C++.npy"
  rc=$?
  set -e
  case $rc in
    0) ;;
    77) note "(MXNet comparison skipped)" ;;
    *) bad "MXNet disagrees" ;;
  esac
fi

# ---- 4. models real MXNet exported, with several inputs and outputs ---------------------------
if [ -z "$gluon_models" ] || [ ! -f "$gluon_models/models.txt" ]; then
  note "SKIP GluonCV/GluonNLP models: ${gluon_models:-GLUON_MODELS}/models.txt is missing (CTest golden.models writes it when MXNet, GluonCV and GluonNLP are installed)"
else
  printf '\n%-36s' "model (outputs)"; for l in $loaders; do printf '%-8s' "$l"; done; printf '\n'
  for model in $xlang_models; do
    line=$(grep "^$model " "$gluon_models/models.txt" || true)
    if [ -z "$line" ]; then
      bad "$model: golden.models did not export it (see that test's output)"
      continue
    fi
    read -r name status num_outputs inputs <<< "$line"
    if [ "$status" != runs ]; then  # golden.models fails unless it is one of its KNOWN_FAILURES
      note "SKIP $model: it does not run in hybridnet yet (golden.models gives the reason)"
      continue
    fi
    files=""
    for f in $inputs; do files="${files:+$files,}$gluon_models/$f"; done
    printf '%-36s' "$model ($num_outputs)"
    for l in $loaders; do
      out="out/gluon_${model}_$l.npy"
      if ! load "$l" "$gluon_models/$model" "$files" "$out"; then
        printf '%-8s' "ERROR"; fail=1; continue
      fi
      verdict=same
      for ((k = 0; k < num_outputs; ++k)); do
        suffix=$([ $k = 0 ] && echo "" || echo ".$k")
        ours="out/gluon_${model}_$l$suffix.npy"
        [ -f "$ours" ] && "$xcpp" same "out/gluon_${model}_C++$suffix.npy" "$ours" > /dev/null \
          || verdict=DIFFERS
      done
      printf '%-8s' "$verdict"
      [ $verdict = same ] || fail=1
    done
    printf '\n'
    if [ "$py" != "-" ]; then
      "$py" - "$gluon_models/$model" "out/gluon_${model}_C++" "$num_outputs" <<'PY' || bad "$model: C++ differs from MXNet"
import sys
import numpy as np
prefix, ours, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
worst = 0.0
for k in range(count):
    ref = np.load(f"{prefix}-mxnet-{k}.npy").astype(np.float64)
    got = np.load(ours + ("" if k == 0 else f".{k}") + ".npy").astype(np.float64)
    err = np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30) if ref.size else 0.0
    print(f"  output {k}: max rel. difference to MXNet {err:.2g}")
    worst = max(worst, err)
sys.exit(0 if worst <= 1e-4 else 1)
PY
    fi
  done
fi

[ $fail = 0 ] && echo "cross_language: OK" || { echo "cross_language: FAILED"; exit 1; }
