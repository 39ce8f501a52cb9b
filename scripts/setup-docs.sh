#!/usr/bin/env bash
# Installs what `make docs` needs, so the documentation build itself runs offline:
# the Debian packages doxygen and python3-markdown (Javadoc comes with default-jdk-headless and
# R's tools::Rd2HTML with r-base-dev, both from scripts/setup.sh), and the Maven plugins that
# attach the -sources.jar and -javadoc.jar (Javadoc, Scaladoc) in ~/.m2. A no-op when all are there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(doxygen python3-markdown)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-docs: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q -o DPkg::Lock::Timeout=600
  $sudo apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}"
fi

# Every plugin of the two POMs (and their dependencies) in the local repository; offline first.
for pom in bindings/java/pom.xml bindings/scala/pom.xml; do
  if ! mvn -o -B -q -ntp -Dstyle.color=never -f "$pom" dependency:resolve-plugins > /dev/null 2>&1; then
    echo "setup-docs: fetching the Maven plugins of $pom into ~/.m2"
    mvn -B -q -ntp -Dstyle.color=never -f "$pom" dependency:resolve-plugins > /dev/null
  fi
done
