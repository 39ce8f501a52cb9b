#!/usr/bin/env bash
# The main job: the seed walkthrough (build a model, run eagerly, hybridize, benchmark, export,
# import), the same in Python, its export loaded from C, C++, Java, Scala, R and Python side by
# side, the digits LeNet trained in C++, Java and R side by side from the same initial parameters,
# then the benchmark table and the files it wrote, read back by the CLI.
set -euo pipefail
build=${1:-build}
fixtures=tests/data/mxnet  # MXNet-written files kept in the repository
out="$build/demo"
mkdir -p "$out"

step() { printf '\n==== %s\n' "$*"; }

step "Seed walkthrough (examples/cpp/seed_walkthrough.cc)"
"$build/bin/seed_walkthrough" --out "$out"

root=$(pwd)
build_abs=$(cd "$build" && pwd)
pyvenv="$build_abs/bindings/python/venv/bin/python"
step "The seed tutorial in its own language (examples/python/seed_tutorial.py, the hybridnet wheel)"
if [ -x "$pyvenv" ]; then
  # Both walkthroughs in folders of their own, so their "wrote ./seed_mlp..." lines compare.
  mkdir -p "$out/python/py" "$out/python/cpp"
  if (cd "$out/python/py" && "$pyvenv" "$root/examples/python/seed_tutorial.py" --out .) \
       > "$out/python/py.log" 2>&1 \
     && (cd "$out/python/cpp" && "$build_abs/bin/seed_walkthrough" --out .) > "$out/python/cpp.log" 2>&1; then
    timings='^(before hybridizing|after hybridizing|speed-up):'
    grep -E "$timings" "$out/python/py.log"
    same=no
    diff <(grep -vE "$timings" "$out/python/py.log") <(grep -vE "$timings" "$out/python/cpp.log") \
      > /dev/null && cmp -s "$out/python/py/seed_mlp-0000.params" "$out/python/cpp/seed_mlp-0000.params" \
      && same=yes
    echo "prints what the C++ walkthrough prints (apart from the timings) and exports the same files: $same"
  else
    echo "Python: the tutorial failed (see $out/python/py.log)"; tail -n 5 "$out/python/py.log"
  fi
else
  echo "(skipped: the Python package is not built)"
fi

step "One export, every language: the C++ walkthrough's seed_mlp loaded from C, C++, Java, Scala, R and Python"
# The same input (3 x 512, normal(0, 1), seed 7) for every language; each writes its output .npy.
xlang="$build/bin/xlang_cpp"
if [ ! -x "$xlang" ] || [ ! -x "$build/bin/xlang_c" ]; then
  echo "(skipped: needs the test helpers xlang_cpp/xlang_c, i.e. a build with HN_BUILD_TESTS=ON)"
else
  xl="$(cd "$out" && pwd)/languages"
  rm -rf "$xl" && mkdir -p "$xl"
  "$xlang" random "$xl/x.npy" 7 3 512
  jar="$build/bindings/java/hybridnet.jar" examples_jar="$build/bindings/java/hybridnet-examples.jar"
  languages=()
  run_lang() {  # NAME HOW COMMAND...: runs COMMAND (which writes $xl/NAME.npy), keeps its log
    local name=$1 how=$2
    shift 2
    if "$@" > "$xl/$name.log" 2>&1; then
      languages+=("$name|$how")
    else
      echo "$name: failed (see $xl/$name.log)"; tail -n 5 "$xl/$name.log"
    fi
  }
  run_lang C "C API program (tests/cross_language/xlang_c.c)" \
    "$build/bin/xlang_c" "$out/seed_mlp" 0 "$xl/x.npy" "$xl/C.npy"
  run_lang C++ "hybridnet run (CLI, C++ core)" \
    "$build/bin/hybridnet" run "$out/seed_mlp" 0 --input "data=$xl/x.npy" --output "$xl/C++.npy"
  if [ -f "$jar" ] && command -v java > /dev/null; then
    run_lang Java "examples/java/Predict.java via hybridnet.jar" \
      java -cp "$jar:$examples_jar" Predict "$out/seed_mlp" 0 "$xl/x.npy" "$xl/Java.npy"
  else
    echo "Java: skipped (the Java binding is not built)"
  fi
  if [ -f "$jar" ] && command -v mvn > /dev/null && command -v java > /dev/null; then
    # examples/scala depends on the Maven artifacts: (re)installed, tests skipped, when missing or
    # older than this build's JAR (the first time takes a minute).
    m2="${HOME}/.m2/repository/org/hybridnet"
    mvn_args=(-B -q -ntp -Dstyle.color=never "-Dhybridnet.build.dir=$(cd "$build" && pwd)" -DskipTests)
    # (maven-metadata-local.xml is rewritten by every install.)
    installed_java="$m2/hybridnet/maven-metadata-local.xml"
    installed_scala="$m2/hybridnet-scala_2.13/maven-metadata-local.xml"
    if [ ! -f "$installed_java" ] || [ ! -f "$installed_scala" ] || [ "$jar" -nt "$installed_java" ]; then
      echo "(installing org.hybridnet:hybridnet and hybridnet-scala_2.13 into ~/.m2 for examples/scala)"
      { mvn "${mvn_args[@]}" -f bindings/java/pom.xml "-Dhybridnet.maven.dir=$(cd "$build" && pwd)/bindings/java/maven" install \
        && mvn "${mvn_args[@]}" -f bindings/scala/pom.xml "-Dhybridnet.maven.dir=$(cd "$build" && pwd)/bindings/scala/maven" install; } \
        > "$xl/maven-install.log" 2>&1 || { echo "(mvn install failed, see $xl/maven-install.log)"; }
    fi
    if mvn -B -q -ntp -Dstyle.color=never -f examples/scala/pom.xml "-Dhybridnet.maven.dir=$xl/scala-maven" \
         package dependency:build-classpath "-Dmdep.outputFile=$xl/scala-cp.txt" -Dmdep.includeScope=runtime \
         > "$xl/scala-build.log" 2>&1; then
      run_lang Scala "examples/scala/Predict.scala (Maven project)" \
        java -cp "$(cat "$xl/scala-cp.txt"):$xl/scala-maven/classes" Predict "$out/seed_mlp" 0 "$xl/x.npy" "$xl/Scala.npy"
    else
      echo "Scala: examples/scala did not build (see $xl/scala-build.log)"
    fi
  else
    echo "Scala: skipped (needs the Java binding, java and mvn)"
  fi
  if [ -d "$build/bindings/r/lib/hybridnet" ] && command -v Rscript > /dev/null; then
    run_lang R "examples/r/predict.R via the R package" \
      env R_LIBS="$build/bindings/r/lib" Rscript examples/r/predict.R "$out/seed_mlp" 0 "$xl/x.npy" "$xl/R.npy"
  else
    echo "R: skipped (the R package is not built)"
  fi
  if [ -x "$pyvenv" ]; then
    run_lang Python "examples/python/predict.py via the hybridnet wheel" \
      "$pyvenv" examples/python/predict.py "$out/seed_mlp" 0 "$xl/x.npy" "$xl/Python.npy"
  else
    echo "Python: skipped (the Python package is not built)"
  fi
  printf '\n%-6s %-52s %s\n' "" "" "output (3 x 2, row by row)"
  agree=1
  for entry in "${languages[@]}"; do
    name=${entry%%|*}
    printf '%-6s %-52s%s\n' "$name" "${entry#*|}" "$("$xlang" print "$xl/$name.npy")"
    "$xlang" same "$xl/C++.npy" "$xl/$name.npy" > /dev/null || agree=0
  done
  if [ "$agree" = 1 ] && [ "${#languages[@]}" -ge 2 ]; then
    echo "verdict: all ${#languages[@]} languages agree, bit for bit (identical float32 outputs)"
  else
    echo "verdict: the languages DISAGREE (or too few ran)"
  fi
fi

step "Training: the digits LeNet in C++, Java and R from one lenet_init.params (5 epochs)"
# Issue 36's digits protocol: each language's example loads the same initial parameters and
# batches with the library's data loader (shuffled, seed 42), so their losses agree bit for bit.
train_dir="$(cd "$out" && pwd)/training"
rm -rf "$train_dir" && mkdir -p "$train_dir"
train_epochs=5
if [ ! -x "$pyvenv" ]; then
  echo "(skipped: examples/python/train_digits.py writes the digits data; needs the Python package)"
elif ! "$pyvenv" examples/python/train_digits.py --write-data "$train_dir/data" \
       > "$train_dir/data.log" 2>&1; then
  echo "(skipped: train_digits.py --write-data failed, see $train_dir/data.log)"
else
  trainers=()
  run_train() {  # NAME COMMAND...: COMMAND DATA_DIR --epochs N --out PREFIX, its log kept
    local name=$1
    shift
    # One thread, as cross_language.training runs them: the bits do not depend on the machine.
    if OMP_NUM_THREADS=1 "$@" "$train_dir/data" --epochs $train_epochs --out "$train_dir/$name" \
         > "$train_dir/$name.log" 2>&1; then
      trainers+=("$name")
    else
      echo "$name: failed (see $train_dir/$name.log)"; tail -n 5 "$train_dir/$name.log"
    fi
  }
  run_train C++ "$build/bin/train_digits_cpp"
  jar="$build/bindings/java/hybridnet.jar"
  if [ ! -f examples/java/TrainDigits.java ]; then
    echo "Java: skipped (examples/java/TrainDigits.java is not in this tree)"
  elif [ -f "$jar" ] && command -v java > /dev/null; then
    run_train Java java -cp "$jar" examples/java/TrainDigits.java
  else
    echo "Java: skipped (the Java binding is not built)"
  fi
  if [ ! -f examples/r/train_digits.R ]; then
    echo "R: skipped (examples/r/train_digits.R is not in this tree)"
  elif [ -d "$build/bindings/r/lib/hybridnet" ] && command -v Rscript > /dev/null; then
    run_train R env R_LIBS="$build/bindings/r/lib" Rscript examples/r/train_digits.R
  else
    echo "R: skipped (the R package is not built)"
  fi
  if [ "${#trainers[@]}" -gt 0 ]; then
    printf '\n%-7s' "epoch"; printf '%-12s' "${trainers[@]}"; printf '\n'
    for ((epoch = 1; epoch <= train_epochs; ++epoch)); do
      printf '%-7s' "$epoch"
      for name in "${trainers[@]}"; do
        loss=$(awk -v e="$epoch" '$1 == "epoch" && ++n == e {print $4}' "$train_dir/$name.log")
        printf '%-12s' "$loss"
      done
      printf '\n'
    done
    identical=yes
    for name in "${trainers[@]}"; do
      for file in -losses.txt .params; do
        cmp -s "$train_dir/${trainers[0]}$file" "$train_dir/$name$file" || identical=no
      done
    done
    if [ "${#trainers[@]}" -ge 2 ]; then
      echo "every step's loss and the trained parameters bit-identical in" \
        "${trainers[*]}: $identical"
    else
      echo "(only ${trainers[0]} trained: nothing to compare)"
    fi
    for name in "${trainers[@]}"; do
      printf '%-5s %s\n' "$name" "$(grep '^test accuracy' "$train_dir/$name.log")"
    done
  fi
fi

step "The exported files, read back by the CLI"
"$build/bin/hybridnet" info "$out/seed_mlp-symbol.json" --shape data=1,512
"$build/bin/hybridnet" info "$out/seed_mlp-0000.params"

step "A file written by MXNet itself (GluonCV cifar_resnet20_v1)"
"$build/bin/hybridnet" info "$fixtures/cifar_resnet20_v1-symbol.json" --shape data=1,3,32,32 | sed -n 1,4p

step "Benchmark: seed MLP, eager vs hybridized vs the OpenBLAS floor (medians, one run)"
"$build/bin/mlp_bench" 2>&1 | sed -n '/^OpenBLAS/p;/^note/p;/^medians/,$p'
