#!/usr/bin/env bash
# hybridnet.jar on its own: from an empty folder, with an empty environment (env -i: no
# LD_LIBRARY_PATH, no PATH, no HOME), run
#   - java -jar hybridnet.jar (versions and where the native library came from),
#   - examples/java/Predict on the C++ seed export; its output must equal the C++ core's, run
#     with an empty environment too (OPENBLAS_CORETYPE, say, picks OpenBLAS's kernels and bits),
#   - examples/java/Walkthrough (exits non-zero unless eager, hybridized, loaded and imported
#     outputs are bit-identical); its export must load in C++ with the same numbers.
#
#   jar_env_i.sh JAVA HYBRIDNET_JAR EXAMPLES_JAR SEED_WALKTHROUGH HN_BINDINGS_RUN WORK_DIR
set -euo pipefail
java=$1 jar=$2 examples=$3 seed=$4 runner=$5 work=$6

rm -rf "$work"
mkdir -p "$work/seed" "$work/empty"
"$seed" --out "$work/seed" > "$work/seed/walkthrough.log"
"$runner" random "$work/x.npy" 7 1 512

cd "$work/empty"   # nothing beside the JARs' absolute paths
env -i "$java" -jar "$jar" | tee "$work/version.txt"
grep -q "native library from the JAR" "$work/version.txt"

env -i "$java" -cp "$jar:$examples" Predict "$work/seed/seed_mlp" 0 "$work/x.npy" "$work/y_java.npy"
env -i "$runner" run "$work/seed/seed_mlp" 0 "$work/x.npy" "$work/y_cpp.npy"
"$runner" compare "$work/y_java.npy" "$work/y_cpp.npy"

env -i "$java" -cp "$jar:$examples" Walkthrough --out "$work/walk" > "$work/walkthrough.log"
tail -n 3 "$work/walkthrough.log"
grep -q "speed-up:" "$work/walkthrough.log"
"$runner" random "$work/x2.npy" 11 3 512
env -i "$java" -cp "$jar:$examples" Predict "$work/walk/java_mlp" 0 "$work/x2.npy" "$work/y2_java.npy"
env -i "$runner" run "$work/walk/java_mlp" 0 "$work/x2.npy" "$work/y2_cpp.npy"
"$runner" compare "$work/y2_java.npy" "$work/y2_cpp.npy"

# Nothing may be left behind in the empty folder or in /tmp's extraction folders of this run.
[ -z "$(ls -A "$work/empty")" ] || { echo "files left in the working folder"; ls -A "$work/empty"; exit 1; }
echo "jar_env_i: OK"
