#!/usr/bin/env bash
# `make check-one T=FILTER`: the gtest cases matching FILTER (gtest's --gtest_filter syntax:
# Suite.Case, 'Ops/OpConformance.*/relu_*', 'A.*:B.*') in whichever test binaries hold them.
# The binaries are hn_add_test's (cmake/HnTest.cmake), read from CTest: its tests that set
# GTEST_TOTAL_SHARDS. Each is built, then run on FILTER where it lists a matching case, in its
# CTest working folder. Fails when a case fails or when no binary has a match.
#   check-one.sh BUILD FILTER [JOBS]
set -euo pipefail

build=$1 filter=$2 jobs=${3:-2}
if [ -z "$filter" ]; then
  echo "check-one: name the case, e.g. make check-one T=OpRegistryLint.EveryOpIsComplete"
  exit 2
fi

# One line per binary: its working folder, a tab, its path.
mapfile -t binaries < <(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, sys
seen = {}
for test in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    if any(e.startswith("GTEST_TOTAL_SHARDS=") for e in props.get("ENVIRONMENT", [])):
        seen.setdefault(test["command"][0], props.get("WORKING_DIRECTORY", "."))
for binary, folder in seen.items():
    print(folder + "\t" + binary)
')
targets=()
for line in "${binaries[@]}"; do
  targets+=("$(basename "${line#*$'\t'}")")
done
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

matched=0
failed=0
for line in "${binaries[@]}"; do
  folder=${line%%$'\t'*}
  binary=${line#*$'\t'}
  # gtest lists a suite as "Suite." and its cases indented below it.
  if ! (cd "$folder" && "$binary" --gtest_list_tests --gtest_filter="$filter") | grep -q '^  '; then
    continue
  fi
  matched=$((matched + 1))
  echo "check-one: $(basename "$binary") --gtest_filter='$filter'"
  (cd "$folder" && "$binary" --gtest_filter="$filter") || failed=1
done
if [ "$matched" -eq 0 ]; then
  echo "check-one: no case matches '$filter' in ${targets[*]}"
  exit 1
fi
exit "$failed"
