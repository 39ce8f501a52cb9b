#!/usr/bin/env bash
# The Spark examples as a user runs them (bindings/spark/README.md): examples/spark built as a
# user's project over the installed hybridnet-spark_2.13, MakeFeatures then BatchScore in local
# mode with plain java (no Spark distribution), scoring the C++ seed walkthrough's export.
# BatchScore runs from the one JAR spark-submit would get (hybridnet-spark_2.13-0.1.0-bundle.jar,
# in place of the Java, Scala and Spark module JARs). spark.hybridnet.native.extractDir names the
# folder the native library is extracted into: the loader creates (and at once deletes) a folder
# there, which changes its modification time.
#
#   examples.sh MVN JAVA EXAMPLES_POM SPARK_POM WORK_DIR SEED_WALKTHROUGH
set -euo pipefail
mvn=$1 java=$2 pom=$3 spark_pom=$4 work=$5 seed=$6

rm -rf "$work"
mkdir -p "$work/seed" "$work/native" "$work/spark-local"
"$mvn" -B -q -ntp -Dstyle.color=never -f "$pom" -Dhybridnet.maven.dir="$work/maven" \
  package dependency:build-classpath -Dmdep.outputFile="$work/cp.txt"
cp="$work/maven/hybridnet-spark-examples-0.1.0.jar:$(cat "$work/cp.txt")"
module_jar=$(tr ':' '\n' < "$work/cp.txt" | grep '/hybridnet-spark_2.13-0.1.0.jar$')
bundle_cp="$work/maven/hybridnet-spark-examples-0.1.0.jar:${module_jar%.jar}-bundle.jar:$(tr ':' '\n' < "$work/cp.txt" \
  | grep -v '/org/hybridnet/' | paste -sd:)"
"$seed" --out "$work/seed" > "$work/seed/walkthrough.log"

# The JVM options spark-submit would add on Java 17 (kept in the module's POM).
read -r -a options <<< "$(sed -n 's:.*<spark.java.options>\(.*\)</spark.java.options>.*:\1:p' "$spark_pom")"
run() {  # run CLASSPATH MAIN ARGS...
  local classpath=$1
  shift
  "$java" "${options[@]}" -Dspark.master='local[2]' -Dspark.ui.enabled=false \
    -Dspark.driver.bindAddress=127.0.0.1 -Dspark.driver.host=127.0.0.1 -Dspark.local.dir="$work/spark-local" \
    -Dspark.hybridnet.native.extractDir="$work/native" \
    -cp "$classpath" "$@"
}
cd "$work"
run "$cp" MakeFeatures "$work/features.parquet" 1000 512 | tee "$work/make.log"
grep -q "wrote 1000 rows of 512 features" "$work/make.log"
touch -d @0 "$work/native"
run "$bundle_cp" BatchScore "$work/features.parquet" "$work/scored.parquet" "$work/seed/seed_mlp" 0 features 512 256 \
  | tee "$work/score.log"
grep -q "scored 1000 rows of $work/features.parquet into $work/scored.parquet: struct<id:bigint,features:array<float>,prediction:array<float>>" "$work/score.log"
grep -q "native library from the JAR" "$work/score.log"
if [ "$(stat -c %Y "$work/native")" = 0 ]; then
  echo "the native library was not extracted under spark.hybridnet.native.extractDir=$work/native"; exit 1
fi

# A missing model fails on the driver, naming the file.
if run "$cp" BatchScore "$work/features.parquet" "$work/bad.parquet" "$work/seed/nothing" 0 features 512 \
     > "$work/missing.log" 2>&1; then
  echo "BatchScore succeeded on a missing model"; exit 1
fi
grep -q "the model file $work/seed/nothing-symbol.json does not exist" "$work/missing.log"
echo "spark examples: OK"
