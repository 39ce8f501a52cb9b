#!/usr/bin/env bash
# Installs real MXNet 1.9.1 (a test-time reference only) into a virtualenv for the golden tests.
# Never fatal: without it the golden tests skip with a message.
set -u
venv=${HN_MXNET_VENV:-$HOME/.cache/hybridnet/mxnet-1.9.1}
if "$venv/bin/python" -c "import mxnet" >/dev/null 2>&1; then exit 0; fi
echo "setup: installing mxnet==1.9.1 into $venv (golden tests; skipped if this fails)"
python3 -m venv "$venv" >/dev/null 2>&1 || { echo "setup: python3 venv unavailable; MXNet golden tests will skip"; exit 0; }
"$venv/bin/pip" install -q --disable-pip-version-check mxnet==1.9.1 'numpy<1.24' \
  || echo "setup: pip could not install mxnet==1.9.1; MXNet golden tests will skip"
exit 0
