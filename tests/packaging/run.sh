#!/usr/bin/env bash
# Consumers of the INSTALLED SDK (tests/packaging/CMakeLists.txt runs one step per CTest test):
#   run.sh install BUILD PREFIX SEED_WALKTHROUGH XLANG_CPP
#                                          cmake --install BUILD --prefix PREFIX (component sdk)
#   run.sh c       PREFIX SRC WORK CC       C program via pkg-config
#   run.sh cxx     PREFIX SRC WORK          C++ program via find_package(hybridnet)
#   run.sh java    PREFIX SRC WORK MVN JAVA Java app via the local Maven repository
#   run.sh scala   PREFIX SRC WORK MVN JAVA Scala app via the local Maven repository
#   run.sh r       PREFIX SRC WORK R RSCRIPT TARBALL   R CMD INSTALL against PREFIX
#   run.sh jars    JAR_TOOL JAR...          every JAR holds META-INF/LICENSE and META-INF/NOTICE
#   run.sh cpack   BUILD WORK               cpack -G TGZ (+ DEB with dpkg-deb): both hold the header,
#                                          libhybridnet.so.MAJOR, the .so link, the CMake package, the .pc
#                                          and the LICENSE and NOTICE
# The model the consumers load is the seed walkthrough's export, written by the install step.
set -euo pipefail
step=$1
shift

model_of() { echo "$1/share/test-model/seed_mlp"; }

case $step in
  install)
    build=$1 prefix=$2 seedw=$3 xcpp=$4
    rm -rf "$prefix"
    cmake --install "$build" --prefix "$prefix" --component sdk
    find "$prefix" -mindepth 1 | sed "s|^$prefix/||" | sort
    for f in include/hybridnet/c_api.h lib/libhybridnet.so lib/pkgconfig/hybridnet.pc \
             lib/cmake/hybridnet/hybridnetConfig.cmake lib/cmake/hybridnet/hybridnetConfigVersion.cmake; do
      [ -e "$prefix/$f" ] || { echo "missing: $f"; exit 1; }
    done
    ls "$prefix"/lib/libhybridnet.so.[0-9]* > /dev/null
    # Test data for the consumers (not part of the SDK).
    mkdir -p "$prefix/share/test-model"
    "$seedw" --out "$prefix/share/test-model" > "$prefix/share/test-model/walkthrough.log"
    "$xcpp" random "$prefix/share/test-model/x.npy" 3 1 512
    [ -f "$prefix/share/test-model/x.npy" ] || { echo "could not write x.npy"; exit 1; }
    echo "installed into $prefix"
    ;;
  c)
    prefix=$1 src=$2 work=$3 cc=$4
    rm -rf "$work" && mkdir -p "$work"
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    echo "pkg-config hybridnet: $(pkg-config --modversion hybridnet): $(pkg-config --cflags --libs hybridnet)"
    # shellcheck disable=SC2046
    "$cc" -std=c99 -Wall -Wextra -Werror "$src/tests/packaging/c/consumer.c" -o "$work/c_consumer" \
      $(pkg-config --cflags --libs hybridnet) -Wl,-rpath,"$(pkg-config --variable=libdir hybridnet)"
    libs=$(ldd "$work/c_consumer")
    grep libhybridnet <<< "$libs"
    grep -q "$prefix" <<< "$libs" || { echo "not linked against the installed library"; exit 1; }
    "$work/c_consumer"
    ;;
  cxx)
    prefix=$1 src=$2 work=$3
    rm -rf "$work"
    cmake -S "$src/tests/packaging/cxx" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release > "$work.configure.log" 2>&1 || { cat "$work.configure.log"; exit 1; }
    cmake --build "$work"
    libs=$(ldd "$work/cxx_consumer")
    grep libhybridnet <<< "$libs"
    grep -q "$prefix" <<< "$libs" || { echo "not linked against the installed library"; exit 1; }
    m=$(model_of "$prefix")
    "$work/cxx_consumer" "$m" "$(dirname "$m")/x.npy"
    ;;
  java|scala)
    prefix=$1 src=$2 work=$3 mvn=$4 java=$5
    rm -rf "$work" && mkdir -p "$work"
    "$mvn" -B -q -ntp -Dstyle.color=never -f "$src/tests/packaging/$step/pom.xml" \
      -Dhybridnet.maven.dir="$work/maven" package dependency:build-classpath \
      -Dmdep.outputFile="$work/cp.txt" -Dmdep.includeScope=runtime
    tr ':' '\n' < "$work/cp.txt" | sed 's|.*/repository/||'
    m=$(model_of "$prefix")
    cd "$work"
    env -i "$java" -cp "$(cat "$work/cp.txt"):$work/maven/classes" App "$m" "$(dirname "$m")/x.npy"
    ;;
  r)
    prefix=$1 src=$2 work=$3 r=$4 rscript=$5 tarball=$6
    rm -rf "$work" && mkdir -p "$work/lib"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u HYBRIDNET_INCLUDE_DIR -u HYBRIDNET_LIB_DIR \
      HYBRIDNET_HOME="$prefix" "$r" CMD INSTALL --no-multiarch -l "$work/lib" "$tarball" > "$work/install.log" 2>&1 \
      || { cat "$work/install.log"; exit 1; }
    grep -i "hybridnet.*HYBRIDNET_HOME\|using" "$work/install.log" | head -n 3 || true
    so=$(find "$work/lib/hybridnet/libs" -name 'hybridnet*.so' -print -quit)
    libs=$(ldd "$so")
    grep libhybridnet <<< "$libs"
    grep -q "$prefix" <<< "$libs" || { echo "the R package is not linked against the installed library"; exit 1; }
    m=$(model_of "$prefix")
    R_LIBS="$work/lib" "$rscript" -e "suppressPackageStartupMessages(library(hybridnet))
      y <- predict(hn_load('$m', 0L), hn_read_npy('$(dirname "$m")/x.npy'))
      cat(sprintf('R consumer (R CMD INSTALL): hybridnet %s, output (%s): %.6g %.6g\n',
                  hn_version(), paste(dim(y), collapse = ', '), y[1], y[2]))"
    ;;
  jars)
    jar_tool=$1
    shift
    for j in "$@"; do
      [ -f "$j" ] || { echo "missing JAR: $j"; exit 1; }
      listing=$("$jar_tool" tf "$j")
      for f in META-INF/LICENSE META-INF/NOTICE; do
        grep -qx "$f" <<< "$listing" || { echo "$(basename "$j") lacks $f"; exit 1; }
      done
      echo "ok $(basename "$j"): META-INF/LICENSE, META-INF/NOTICE"
    done
    ;;
  cpack)
    build=$1 work=$2
    rm -rf "$work" && mkdir -p "$work"
    generators=TGZ
    command -v dpkg-deb > /dev/null && generators="TGZ;DEB"
    (cd "$work" && cpack -G "$generators" --config "$build/CPackConfig.cmake" -B "$work" > cpack.log 2>&1) \
      || { cat "$work/cpack.log"; exit 1; }
    check_list() {  # WHAT LISTING
      for f in include/hybridnet/c_api.h lib/libhybridnet.so lib/pkgconfig/hybridnet.pc \
               lib/cmake/hybridnet/hybridnetConfig.cmake share/doc/hybridnet/LICENSE \
               share/doc/hybridnet/NOTICE; do
        grep -Eq "/$f( ->.*)?\$" "$2" || { echo "missing from $1: $f"; exit 1; }
      done
      grep -Eq '/lib/libhybridnet\.so\.[0-9]+( ->.*)?$' "$2" || { echo "missing from $1: libhybridnet.so.MAJOR"; exit 1; }
    }
    archive=$(ls "$work"/hybridnet-*.tar.gz)
    echo "archive: $(basename "$archive")"
    tar tzvf "$archive" | awk '{print $6, $7, $8}' | sed 's/ *$//' | tee "$work/list.txt"
    check_list "$(basename "$archive")" "$work/list.txt"
    if [ "$generators" = "TGZ;DEB" ]; then
      deb=$(ls "$work"/hybridnet_*.deb)
      echo "package: $(basename "$deb")"
      dpkg-deb -c "$deb" | awk '{print $6, $7, $8}' | sed 's/ *$//' > "$work/deb.txt"
      check_list "$(basename "$deb")" "$work/deb.txt"
      dpkg-deb -f "$deb" Package Version Depends
    fi
    echo "cpack: OK"
    ;;
  *) echo "unknown step $step"; exit 2 ;;
esac
