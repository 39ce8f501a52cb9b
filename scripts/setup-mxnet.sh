#!/usr/bin/env bash
# Installs the test-time references into a virtualenv for the golden tests: real MXNet 1.9.1,
# the GluonCV 0.10.5.post0 / GluonNLP 0.10.0 model zoos and scikit-learn (its bundled digits).
# Never fatal: without them the golden tests skip with a message. MXNet 1.9.1 needs numpy < 1.24,
# so every numpy-dependent package is pinned to the last release that still accepts it (pip
# would otherwise upgrade numpy to 2.x and break `import mxnet`).
set -u
venv=${HN_MXNET_VENV:-$HOME/.cache/hybridnet/mxnet-1.9.1}
pins=('numpy<1.24' 'scipy<1.11' 'pandas<2.1' 'matplotlib<3.8' 'contourpy<1.2' 'opencv-python<4.9')
if "$venv/bin/python" -c "import mxnet, gluoncv, gluonnlp, sklearn" >/dev/null 2>&1; then exit 0; fi
echo "setup: installing mxnet==1.9.1, gluoncv, gluonnlp into $venv (golden tests; skipped if this fails)"
python3 -m venv "$venv" >/dev/null 2>&1 || { echo "setup: python3 venv unavailable; MXNet golden tests will skip"; exit 0; }
"$venv/bin/pip" install -q --disable-pip-version-check mxnet==1.9.1 "${pins[@]}" \
  || { echo "setup: pip could not install mxnet==1.9.1; MXNet golden tests will skip"; exit 0; }
"$venv/bin/pip" install -q --disable-pip-version-check gluoncv==0.10.5.post0 gluonnlp==0.10.0 "${pins[@]}" \
  || echo "setup: pip could not install gluoncv/gluonnlp; their golden tests will skip"
# scikit-learn for its bundled 8x8 digits, which examples/python/train_digits.py learns under
# MXNet too; 1.2.2 is the last release built for numpy < 1.24.
"$venv/bin/pip" install -q --disable-pip-version-check scikit-learn==1.2.2 "${pins[@]}" \
  || echo "setup: pip could not install scikit-learn; the MXNet digits example will skip"
exit 0
