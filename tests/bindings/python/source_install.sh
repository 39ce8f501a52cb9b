#!/usr/bin/env bash
# `pip install bindings/python` from the source folder (CTest python.source_install): into a
# fresh virtualenv (Debian's numpy/cffi visible), with no prebuilt library, so setup.py builds
# libhybridnet.so.0 with CMake; then the package runs from elsewhere with no LD_LIBRARY_PATH.
# setuptools' build folders go to WORK (DIST_EXTRA_CONFIG), so the source folder stays clean.
#
#   source_install.sh PYTHON REPOSITORY WORK
set -euo pipefail
python=$1 repo=$2 work=$3
rm -rf "$work"
mkdir -p "$work/egg"
printf '[build]\nbuild_base = %s/setuptools\n[egg_info]\negg_base = %s/egg\n' "$work" "$work" \
  > "$work/setup.cfg"
"$python" -m venv --system-site-packages "$work/venv"
unset LD_LIBRARY_PATH HYBRIDNET_LIBRARY
DIST_EXTRA_CONFIG="$work/setup.cfg" "$work/venv/bin/python" -m pip install --no-build-isolation \
  --no-deps --no-index --disable-pip-version-check --quiet "$repo/bindings/python" \
  > "$work/pip.log" 2>&1 || { tail -n 30 "$work/pip.log"; echo "FAIL: pip install"; exit 1; }
cd "$work"
"$work/venv/bin/python" - <<'PY'
import os
import sys

import hybridnet as mx
from hybridnet.gluon import nn

package = os.path.dirname(mx.__file__)
assert package.startswith(sys.prefix), package
assert os.path.isfile(os.path.join(package, "libhybridnet.so.0"))
net = nn.HybridSequential()
with net.name_scope():
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
net.initialize()
x = mx.nd.ones((1, 3))
eager = net(x).asnumpy()
net.hybridize()
assert (net(x).asnumpy() == eager).all()
print("installed from the source folder:", package, mx.__version__)
PY
for leftover in "$repo/bindings/python/build" "$repo"/bindings/python/*.egg-info; do
  if [ -e "$leftover" ]; then echo "FAIL: the install left $leftover in the source folder"; exit 1; fi
done
echo "python.source_install: OK"
