#!/usr/bin/env bash
# Cross-language training (CTest cross_language.training, issue 36): the digits LeNet trained
# for 50 steps from the same lenet_init.params on the same batches (--no-shuffle) in C++
# (examples/cpp/train.cc), Python (examples/python/train_digits.py), Java
# (examples/java/TrainDigits.java, run from source against hybridnet.jar), Scala
# (examples/scala/TrainDigits.scala, built by Maven as run.sh builds Predict) and R
# (examples/r/train_digits.R), once with SGD-momentum and once with Adam, on one thread. Every
# language's PREFIX-losses.txt (each step's loss as float32 bits) and PREFIX.params must be
# byte-identical to C++'s. Prints a table: language x optimizer, first and last step loss,
# identical or not.
#
#   train.sh WORK SRC TRAIN_CPP HN_PYTHON JAVA JAR RSCRIPT R_LIBS MVN
# TRAIN_CPP is the built examples/cpp/train.cc; HN_PYTHON the Python with the hybridnet package.
# A "-" for HN_PYTHON, JAVA or RSCRIPT (that language is not built) and a missing example file
# fail the run; MVN "-" (or the Scala binding not installed in ~/.m2) skips Scala with the
# reason, as run.sh does.
set -euo pipefail
work=$1 src=$2 train_cpp=$3 hnpy=$4 java=$5 jar=$6 rscript=$7 rlibs=$8 mvn=$9
steps=50
optimizers="sgd adam"

rm -rf "$work"
mkdir -p "$work/out"
cd "$work"
export OMP_NUM_THREADS=1
fail=0
bad() { printf '  FAIL: %s\n' "$*"; fail=1; }

[ "$hnpy" != "-" ] || { echo "FAIL: the Python binding must be built (HN_BUILD_PYTHON)"; exit 1; }
"$hnpy" "$src/examples/python/train_digits.py" --write-data data > data.log \
  || { cat data.log; echo "FAIL: train_digits.py --write-data"; exit 1; }

# ---- the languages: what runs each one's example, and what it needs ---------------------------
languages="C++ Python Java Scala R"
declare -A example=(
  [C++]=$train_cpp
  [Python]=$src/examples/python/train_digits.py
  [Java]=$src/examples/java/TrainDigits.java
  [Scala]=$src/examples/scala/TrainDigits.scala
  [R]=$src/examples/r/train_digits.R)
declare -A missing=()  # language -> why it cannot run (a failure)
declare -A skipped=()  # language -> why it is skipped (Scala only)
for language in $languages; do
  [ -f "${example[$language]}" ] || missing[$language]="${example[$language]} is missing"
done
[ "$java" != "-" ] || missing[Java]="Java is not built (HN_BUILD_JAVA)"
[ "$rscript" != "-" ] || missing[R]="R is not built (HN_BUILD_R)"

scala_cp=""
if [ -n "${missing[Scala]:-}" ]; then
  :
elif [ "$mvn" = "-" ]; then
  skipped[Scala]="mvn not found, the Scala binding is not built"
elif [ ! -d "${HOME:-/nonexistent}/.m2/repository/org/hybridnet/hybridnet-scala_2.13" ]; then
  skipped[Scala]="org.hybridnet:hybridnet-scala_2.13 is not in ~/.m2 (scala.munit installs it)"
elif "$mvn" -B -q -ntp -Dstyle.color=never -f "$src/examples/scala/pom.xml" \
    -Dhybridnet.maven.dir="$work/scala-maven" package dependency:build-classpath \
    -Dmdep.outputFile="$work/scala-cp.txt" -Dmdep.includeScope=runtime > scala-build.log 2>&1; then
  scala_cp="$(cat scala-cp.txt):$work/scala-maven/classes"
else
  cat scala-build.log
  missing[Scala]="examples/scala did not build (scala-build.log above)"
fi

train() {  # LANGUAGE ARGS...: runs that language's example on the data
  local language=$1
  shift
  case $language in
    C++) "$train_cpp" data "$@" ;;
    Python) "$hnpy" "${example[Python]}" --data data "$@" ;;
    Java) "$java" -cp "$jar" "${example[Java]}" data "$@" ;;
    Scala) "$java" -cp "$scala_cp" TrainDigits data "$@" ;;
    R) R_LIBS=$rlibs "$rscript" "${example[R]}" data "$@" ;;
  esac
}

# The float32 a losses file's line holds, for the table.
decode() {
  "$hnpy" -c 'import struct, sys; print("%.6f" % struct.unpack(">f", bytes.fromhex(sys.argv[1])))' \
    "$1"
}

printf '%-8s %-10s %-12s %-12s %s\n' language optimizer "first loss" "last loss" identical
for optimizer in $optimizers; do
  reference=out/C++-$optimizer
  for language in $languages; do
    prefix=out/$language-$optimizer
    if [ -n "${skipped[$language]:-}" ]; then
      printf '%-8s %-10s SKIP: %s\n' "$language" "$optimizer" "${skipped[$language]}"
      continue
    fi
    if [ -n "${missing[$language]:-}" ]; then
      printf '%-8s %-10s FAIL: %s\n' "$language" "$optimizer" "${missing[$language]}"
      fail=1
      continue
    fi
    if ! train "$language" --no-shuffle --steps $steps --optimizer "$optimizer" --out "$prefix" \
        > "$prefix.log" 2>&1; then
      printf '%-8s %-10s FAIL: the example failed; its output:\n' "$language" "$optimizer"
      sed 's/^/    /' "$prefix.log"
      fail=1
      continue
    fi
    verdict=yes notes=()
    for file in -losses.txt .params; do
      if [ ! -f "$prefix$file" ]; then
        notes+=("$language did not write $prefix$file")
      elif [ "$language" != C++ ] && ! cmp -s "$reference$file" "$prefix$file"; then
        notes+=("$prefix$file differs from $reference$file")
      fi
    done
    lines=$(cat "$prefix-losses.txt" 2> /dev/null | wc -l)
    [ "$lines" -eq $steps ] || notes+=("$prefix-losses.txt has $lines lines, not $steps")
    first=- last=-
    if [ -s "$prefix-losses.txt" ]; then
      first=$(decode "$(head -n 1 "$prefix-losses.txt")")
      last=$(decode "$(tail -n 1 "$prefix-losses.txt")")
    fi
    [ ${#notes[@]} = 0 ] || verdict=no
    printf '%-8s %-10s %-12s %-12s %s\n' "$language" "$optimizer" "$first" "$last" "$verdict"
    for note in "${notes[@]}"; do bad "$note"; done
  done
done

if [ $fail = 0 ]; then
  echo "cross_language.training: every language's losses and parameters are byte-identical to C++'s"
else
  echo "cross_language.training: FAILED"
  exit 1
fi
