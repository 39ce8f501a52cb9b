#!/usr/bin/env bash
# Builds and runs bench/spark/SparkBench.scala: Spark local[1] and local[2] vs a plain loop.
#
#   bench/spark/run.sh BUILD_DIR [REPEATS]
#
# Installs the Java, Scala and Spark artifacts of this checkout into ~/.m2 (tests skipped; the
# CTest tests run them), builds the benchmark as a user's project and runs it with plain java.
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [REPEATS]}" && pwd)
repeats=${2:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/bench/spark
mvn=(mvn -B -q -ntp -Dstyle.color=never -Dhybridnet.build.dir="$build")

mkdir -p "$work"
"${mvn[@]}" -f "$root/bindings/java/pom.xml" -Dhybridnet.maven.dir="$build/bindings/java/maven" install -DskipTests
"${mvn[@]}" -f "$root/bindings/scala/pom.xml" -Dhybridnet.maven.dir="$build/bindings/scala/maven" install -DskipTests
"${mvn[@]}" -f "$root/bindings/spark/pom.xml" -Dhybridnet.maven.dir="$build/bindings/spark/maven" install -DskipTests
"${mvn[@]}" -f "$root/bench/spark/pom.xml" -Dhybridnet.maven.dir="$work/maven" \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt"

# The OpenBLAS build and kernel in use, as the C++ benchmarks print them.
"$build/bin/layer_bench" --benchmark_filter='^$' 2>/dev/null | grep '^OpenBLAS' || true
java_options=$(sed -n 's:.*<spark.java.options>\(.*\)</spark.java.options>.*:\1:p' "$root/bindings/spark/pom.xml")
# shellcheck disable=SC2086  # the options are separate words
java -Xmx3g $java_options -cp "$(cat "$work/cp.txt"):$work/maven/classes" SparkBench \
  "$work/run" "$root/tests/data/mxnet/cifar_resnet20_v1" "$repeats"
