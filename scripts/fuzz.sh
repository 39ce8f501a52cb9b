#!/usr/bin/env bash
# Runs every libFuzzer target of BUILD (configured with -DHN_FUZZ=ON) for SECONDS each, one after
# another, on a working corpus seeded from tests/fuzz/corpus/<target>. New inputs stay in
# BUILD/fuzz/<target>/; crashes, leaks, timeouts and oversized allocations are written to
# BUILD/fuzz/findings/ and fail the run. Minimize a finding into the committed corpus with
#   hn_fuzz_<target> -minimize_crash=1 FILE, then copy it to tests/fuzz/corpus/<target>/.
#   fuzz.sh BUILD SECONDS [TARGET...]
set -euo pipefail
build=$1 seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(symbol_json params npy model)
mkdir -p "$build/fuzz/findings"
lscpu | sed -n 's/^Model name: *//p' | head -1
for t in "${targets[@]}"; do
  work="$build/fuzz/$t"
  mkdir -p "$work"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  echo "== $t: ${seconds} s"
  "$build/bin/hn_fuzz_$t" "$work" "tests/fuzz/corpus/$t" "${dict[@]}" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/findings/$t-" 2>&1 | tee "$build/fuzz/$t.log" | grep -E '^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY)' || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "$t: a finding, see $build/fuzz/findings/ and $build/fuzz/$t.log"; exit 1; }
done
