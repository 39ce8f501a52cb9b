#!/usr/bin/env bash
# Runs Doxygen on the public headers with docs/reference/Doxyfile.in; warnings go to
# OUT/warnings.log (the caller decides what fails).
#   doxygen.sh c   OUT   C API (c_api.h, grouped by its section banners): HTML + XML,
#                        every undocumented symbol is a warning
#   doxygen.sh cpp OUT   C++ API (core/include): HTML of every public symbol
#   doxygen.sh cpp-coverage OUT   the C++ headers again (XML), every undocumented public symbol
#                        a warning (tests/docs/check_cpp_reference.py)
set -euo pipefail
kind=$1
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
python=${HN_DOCS_PYTHON:-python3}
version=$(sed -n 's/^#define HN_VERSION_STRING "\([^"]*\)".*/\1/p' "$src/c_api/include/hybridnet/c_api.h")

case $kind in
  #              input                 mainpage     extract_all warn_undoc for_c html xml
  c)            set -- c_api/include   c-api.md     NO  YES YES YES YES ;;
  cpp)          set -- core/include    cpp-api.md   YES NO  NO  YES NO ;;
  cpp-coverage) set -- core/include    cpp-api.md   NO  YES NO  NO  YES ;;
  *) echo "doxygen.sh: unknown kind '$kind' (c, cpp, cpp-coverage)" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
sed -e "s|@VERSION@|$version|" \
    -e "s|@BRIEF@|${kind%-coverage} API reference|" \
    -e "s|@OUTPUT@|$out|" \
    -e "s|@INPUT@|$src/$1 $src/docs/reference/$2|" \
    -e "s|@MAINPAGE@|$src/docs/reference/$2|" \
    -e "s|@STRIP@|$src|" \
    -e "s|@STRIP_INC@|$src/c_api/include $src/core/include|" \
    -e "s|@FILTER_PATTERNS@|\"*/c_api.h=$python $src/docs/reference/c_api_filter.py\"|" \
    -e "s|@EXTRACT_ALL@|$3|" \
    -e "s|@WARN_UNDOC@|$4|" \
    -e "s|@FOR_C@|$5|" \
    -e "s|@HTML@|$6|" \
    -e "s|@XML@|$7|" \
    -e "s|@WARN_LOG@|$out/warnings.log|" \
    "$src/docs/reference/Doxyfile.in" > "$out/Doxyfile"
rm -f "$out/warnings.log"
# Doxygen's own complaints (not source warnings) go to stderr: they count as warnings too.
(cd "$src" && doxygen "$out/Doxyfile") 2> "$out/stderr.log"
touch "$out/warnings.log"
cat "$out/stderr.log" >> "$out/warnings.log"
