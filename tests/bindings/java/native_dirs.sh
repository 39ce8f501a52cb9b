#!/usr/bin/env bash
# Where hybridnet.jar takes its native libraries from, with java.io.tmpdir unusable (a path under
# a regular file, so even root cannot create it, as on hosts whose /tmp is noexec or read-only):
#   - nothing set: the load fails, and the message names every location tried;
#   - -Dhybridnet.native.extract.dir / HYBRIDNET_NATIVE_EXTRACT_DIR: extracted there, it runs;
#   - -Dhybridnet.native.dir / HYBRIDNET_NATIVE_DIR: pre-extracted libraries load from there;
#   - a native dir without the libraries: the error names it.
#   native_dirs.sh JAVA JAR_TOOL HYBRIDNET_JAR WORK_DIR
set -euo pipefail
java=$1 jar_tool=$2 jar=$3 work=$4
rm -rf "$work"
mkdir -p "$work/extract" "$work/natives" "$work/empty"
bad_tmp=/dev/null/tmp
run() { env -i "$@" 2>&1; }

out=$(run "$java" -Djava.io.tmpdir=$bad_tmp -jar "$jar") && { echo "loaded with no usable folder:"; echo "$out"; exit 1; }
for expected in "Tried:" "java.io.tmpdir=$bad_tmp" "java.library.path" "HYBRIDNET_NATIVE_EXTRACT_DIR"; do
  grep -qF "$expected" <<< "$out" || { echo "the error does not mention '$expected':"; echo "$out"; exit 1; }
done
echo "ok: nothing usable -> the error lists what was tried"

out=$(run "$java" -Djava.io.tmpdir=$bad_tmp -Dhybridnet.native.extract.dir="$work/extract" -jar "$jar")
grep -q "native library from the JAR" <<< "$out" || { echo "$out"; exit 1; }
[ -z "$(ls -A "$work/extract")" ] || { echo "extraction folder not cleaned"; exit 1; }
echo "ok: -Dhybridnet.native.extract.dir"

out=$(run HYBRIDNET_NATIVE_EXTRACT_DIR="$work/extract" "$java" -Djava.io.tmpdir=$bad_tmp -jar "$jar")
grep -q "native library from the JAR" <<< "$out" || { echo "$out"; exit 1; }
echo "ok: HYBRIDNET_NATIVE_EXTRACT_DIR"

(cd "$work/natives" && "$jar_tool" xf "$jar" org/hybridnet/native/linux-x86_64 \
  && mv org/hybridnet/native/linux-x86_64/* . && rm -rf org)
out=$(run "$java" -Djava.io.tmpdir=$bad_tmp -Dhybridnet.native.dir="$work/natives" -jar "$jar")
grep -qF "native library from $work/natives" <<< "$out" || { echo "$out"; exit 1; }
echo "ok: -Dhybridnet.native.dir"
out=$(run HYBRIDNET_NATIVE_DIR="$work/natives" "$java" -Djava.io.tmpdir=$bad_tmp -jar "$jar")
grep -qF "native library from $work/natives" <<< "$out" || { echo "$out"; exit 1; }
echo "ok: HYBRIDNET_NATIVE_DIR"

out=$(run HYBRIDNET_NATIVE_DIR="$work/empty" "$java" -jar "$jar") && { echo "loaded from an empty folder"; exit 1; }
grep -qF "HYBRIDNET_NATIVE_DIR=$work/empty" <<< "$out" || { echo "$out"; exit 1; }
echo "ok: an empty native dir is named in the error"
echo "native_dirs: OK"
