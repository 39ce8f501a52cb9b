#!/usr/bin/env bash
# The R source tarball stands alone: installed into a fresh library with no hybridnet SDK in
# sight (HYBRIDNET_* unset, no pkg-config entry, the build tree's libhybridnet not on any path),
# configure compiles the library sources the tarball carries; the installed package does not load
# any libhybridnet.so, and predicts the seed MLP with the same numbers as the CLI.
#   standalone_install.sh R RSCRIPT TARBALL CLI CLI_FIXTURE SEED_WALKTHROUGH EXAMPLES_R WORK
set -euo pipefail
r=$1 rscript=$2 tarball=$3 cli=$4 fixture=$5 seed=$6 examples=$7 work=$8
rm -rf "$work"
mkdir -p "$work/lib" "$work/seed"
clean_env=(env -u HYBRIDNET_HOME -u HYBRIDNET_INCLUDE_DIR -u HYBRIDNET_LIB_DIR -u LD_LIBRARY_PATH
           -u R_LIBS -u R_LIBS_USER -u MFLAGS -u MAKELEVEL PKG_CONFIG_PATH= MAKEFLAGS=-j2)

# What is tested is that the tarball stands alone, not R's optimizer: -O0 without debug info
# is the quickest compile of the bundled library (R's default is -g -O2), and through ccache
# where the machine has it (as the CMake build is), a machine that compiled the same sources
# before recompiles none of them.
printf 'CXX17FLAGS = -O0\nCFLAGS = -O0\n' > "$work/Makevars"
if ccache=$(command -v ccache); then
  printf 'CXX17 = %s %s\nCC = %s %s\n' "$ccache" "$("$r" CMD config CXX17)" \
    "$ccache" "$("$r" CMD config CC)" >> "$work/Makevars"
fi
start=$(date +%s)
"${clean_env[@]}" R_MAKEVARS_USER="$work/Makevars" "$r" CMD INSTALL --no-multiarch -l "$work/lib" "$tarball" > "$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }
echo "R CMD INSTALL (bundled build): $(( $(date +%s) - start )) s"
grep "^hybridnet:" "$work/install.log"
grep -q "compiling the bundled library sources" "$work/install.log" \
  || { echo "configure did not choose the bundled sources"; exit 1; }

so="$work/lib/hybridnet/libs/hybridnet.so"
if ldd "$so" | grep -q libhybridnet; then
  echo "the installed package still loads a libhybridnet:"; ldd "$so"; exit 1
fi
echo "ok: $so links no libhybridnet ($(ldd "$so" | grep -o 'libopenblas[^ ]*' | head -1) for BLAS)"

"$seed" --out "$work/seed" > /dev/null
"$fixture" npy "$work/x.npy" 3,512
"${clean_env[@]}" R_LIBS="$work/lib" "$rscript" "$examples/predict.R" "$work/seed/seed_mlp" 0 \
  "$work/x.npy" "$work/y_r.npy"
"$cli" run "$work/seed/seed_mlp" 0 --input "data=$work/x.npy" --output "$work/y_cli.npy" > /dev/null
"$fixture" compare "$work/y_r.npy" "$work/y_cli.npy" 0
echo "standalone_install: OK"
