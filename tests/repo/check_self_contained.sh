#!/usr/bin/env bash
# Fails when a tracked source, build file, script or doc of the repository at $1 refers to a path
# outside it (a sibling checkout, a developer's home or workspace). The setup scripts' caches under
# $HOME (~/.cache/hybridnet, ~/.m2) are written with ~ or $HOME and are not matched.
#   check_self_contained.sh ROOT              check the repository at ROOT
#   check_self_contained.sh --self-test       plant bad references in a scratch tree; all must be caught
set -euo pipefail

# Spelled in pieces so this file does not match itself.
patterns=('\.\./'"shared" '/'"work/" '/'"root/" '/'"home/[a-z]" '/'"Users/")

check() {
  local root=$1 files
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git -C "$root" ls-files)
  else
    files=$(cd "$root" && find . -type f -not -path './.git/*' | sed 's|^\./||')
  fi
  local regex found=0
  regex=$(IFS='|'; echo "${patterns[*]}")
  while IFS= read -r f; do
    case "$f" in
      tests/data/*|*.params|*.nd|*.npy|*.jar|*.png) continue ;;  # data, not paths
    esac
    [ -f "$root/$f" ] || continue
    if grep -nIE "$regex" "$root/$f" > /tmp/hn_self_contained.$$ 2>/dev/null; then
      sed "s|^|$f:|" /tmp/hn_self_contained.$$
      found=$((found + 1))
    fi
  done <<< "$files"
  rm -f /tmp/hn_self_contained.$$
  echo "$found file(s) refer to paths outside the repository"
  [ "$found" -eq 0 ]
}

if [ "${1:-}" = "--self-test" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  printf 'ok: tests/data/mxnet, ~/.cache/hybridnet, $HOME/.m2\n' > "$scratch/clean.sh"
  check "$scratch" > /dev/null || { echo "self-test: a clean tree was reported"; exit 1; }
  for bad in "../""shared/fixtures/mxnet" "/""work/main/x" "/""root/.cache/x" "/""home/alice/x" "/""Users/bob/x"; do
    printf 'set(X "%s")\n' "$bad" > "$scratch/CMakeLists.txt"
    if check "$scratch" > /dev/null; then echo "self-test: '$bad' was not caught"; exit 1; fi
  done
  echo "self-test: every planted reference was caught"
  exit 0
fi
check "${1:?usage: check_self_contained.sh ROOT | --self-test}"
