#!/usr/bin/env bash
# Fetches what `make docs` needs beyond scripts/setup.sh's Debian packages (doxygen,
# python3-markdown, the JDK's javadoc, R's tools::Rd2HTML), so the documentation build itself
# runs offline: the Maven plugins that attach the -sources.jar and -javadoc.jar (Javadoc,
# Scaladoc), into ~/.m2. A no-op when they are there.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every plugin of the two POMs (and their dependencies) in the local repository; offline first.
for pom in bindings/java/pom.xml bindings/scala/pom.xml; do
  if ! mvn -o -B -q -ntp -Dstyle.color=never -P docs -f "$pom" dependency:resolve-plugins > /dev/null 2>&1; then
    echo "setup-docs: fetching the Maven plugins of $pom into ~/.m2"
    mvn -B -q -ntp -Dstyle.color=never -P docs -f "$pom" dependency:resolve-plugins > /dev/null
  fi
done
