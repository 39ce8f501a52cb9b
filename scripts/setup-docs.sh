#!/usr/bin/env bash
# Fetches what `make docs` needs beyond scripts/setup.sh's Debian packages (doxygen,
# python3-markdown, the JDK's javadoc, R's tools::Rd2HTML), so the documentation build itself
# runs offline: the Maven plugins that attach the -sources.jar and -javadoc.jar (Javadoc,
# Scaladoc), into ~/.m2. A no-op when they are there.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every plugin of the three POMs (and their dependencies) in the local repository; offline first.
for pom in bindings/java/pom.xml bindings/scala/pom.xml bindings/spark/pom.xml; do
  if ! mvn -o -B -q -ntp -Dstyle.color=never -P docs -f "$pom" dependency:resolve-plugins > /dev/null 2>&1; then
    echo "setup-docs: fetching the Maven plugins of $pom into ~/.m2"
    mvn -B -q -ntp -Dstyle.color=never -P docs -f "$pom" dependency:resolve-plugins > /dev/null
  fi
done

# The Spark module compiles (and its Scaladoc reads) against Spark's JARs (`provided`) and
# scala-maven-plugin runs Scala's compiler: resolved through a throwaway POM holding just those,
# because the module's own POM also needs hybridnet-scala, which `make docs` installs itself.
property() { sed -n "s|.*<$1>\\(.*\\)</$1>.*|\\1|p" bindings/spark/pom.xml; }
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
cat > "$probe/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.hybridnet.setup</groupId>
  <artifactId>spark-docs-dependencies</artifactId>
  <version>0</version>
  <dependencies>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-sql_2.13</artifactId><version>$(property spark.version)</version></dependency>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-mllib_2.13</artifactId><version>$(property spark.version)</version></dependency>
    <dependency><groupId>org.scala-lang</groupId><artifactId>scala-compiler</artifactId><version>$(property scala.version)</version></dependency>
  </dependencies>
</project>
POM
if ! mvn -o -B -q -ntp -Dstyle.color=never -f "$probe/pom.xml" dependency:resolve > /dev/null 2>&1; then
  echo "setup-docs: fetching Spark $(property spark.version) and Scala $(property scala.version) into ~/.m2"
  mvn -B -q -ntp -Dstyle.color=never -f "$probe/pom.xml" dependency:resolve > /dev/null
fi
