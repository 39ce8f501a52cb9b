#!/usr/bin/env bash
# The Scala examples as a user builds them (examples/scala/pom.xml, depending on the installed
# hybridnet-scala_2.13), run with plain java: Predict on the C++ seed export must equal the C++
# core's output, the Walkthrough's export must load in C++ with the same numbers. The C++ runs
# get the same empty environment (OPENBLAS_CORETYPE, say, picks OpenBLAS's kernels and bits).
#
#   examples.sh MVN JAVA EXAMPLES_POM WORK_DIR SEED_WALKTHROUGH HN_BINDINGS_RUN
set -euo pipefail
mvn=$1 java=$2 pom=$3 work=$4 seed=$5 runner=$6

rm -rf "$work"
mkdir -p "$work/seed"
"$mvn" -B -q -ntp -Dstyle.color=never -f "$pom" -Dhybridnet.maven.dir="$work/maven" \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=runtime
cp="$(cat "$work/cp.txt"):$work/maven/classes"

"$seed" --out "$work/seed" > "$work/seed/walkthrough.log"
"$runner" random "$work/x.npy" 5 2 512
cd "$work"
env -i "$java" -cp "$cp" Predict "$work/seed/seed_mlp" 0 "$work/x.npy" "$work/y_scala.npy"
env -i "$runner" run "$work/seed/seed_mlp" 0 "$work/x.npy" "$work/y_cpp.npy"
"$runner" compare "$work/y_scala.npy" "$work/y_cpp.npy"

env -i "$java" -cp "$cp" Walkthrough --out "$work/walk" | tee "$work/walkthrough.log"
grep -q "speed-up" "$work/walkthrough.log"
env -i "$runner" run "$work/walk/scala_mlp" 0 "$work/x.npy" "$work/y2_cpp.npy"
env -i "$java" -cp "$cp" Predict "$work/walk/scala_mlp" 0 "$work/x.npy" "$work/y2_scala.npy"
"$runner" compare "$work/y2_scala.npy" "$work/y2_cpp.npy"
echo "scala examples: OK"
