#!/usr/bin/env bash
# Builds and runs bench/scala/ScalaTrainBench.scala: the seed MLP's training step through the
# Scala facade, in rounds alternating with the C API's (BUILD_DIR/bin/binding_train_bench_c).
#
#   bench/scala/run.sh BUILD_DIR [REPEATS [WORK_DIR]]
#
# Installs the Java and Scala artifacts of BUILD_DIR into ~/.m2 (tests skipped; the CTest tests
# run them), so both sides run the same native library; builds the benchmark as a user's project
# in WORK_DIR (default BUILD_DIR/bench/scala) and runs it with plain java.
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [REPEATS [WORK_DIR]]}" && pwd)
repeats=${2:-10}
work=${3:-$build/bench/scala}
root=$(cd "$(dirname "$0")/../.." && pwd)
mvn=(mvn -B -q -ntp -Dstyle.color=never -Dhybridnet.build.dir="$build")

mkdir -p "$work"
"${mvn[@]}" -f "$root/bindings/java/pom.xml" -Dhybridnet.maven.dir="$work/java" install -DskipTests
"${mvn[@]}" -f "$root/bindings/scala/pom.xml" -Dhybridnet.maven.dir="$work/scala" install -DskipTests
"${mvn[@]}" -f "$root/bench/scala/pom.xml" -Dhybridnet.maven.dir="$work/maven" \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=runtime
java -cp "$(cat "$work/cp.txt"):$work/maven/classes" ScalaTrainBench \
  "$build/bin/binding_train_bench_c" "$repeats"
