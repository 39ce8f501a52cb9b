#!/usr/bin/env bash
# Installs the onnx and onnxruntime wheels (test-time references and `hybridnet convert --check`,
# never run-time dependencies) into a virtualenv. Never fatal: without them the ONNX parity
# tests skip with a message.
set -u
venv=${HN_ONNX_VENV:-$HOME/.cache/hybridnet/onnx}
if "$venv/bin/python" -c "import onnx, onnxruntime" >/dev/null 2>&1; then exit 0; fi
echo "setup: installing onnx and onnxruntime into $venv (ONNX parity tests; skipped if this fails)"
python3 -m venv "$venv" >/dev/null 2>&1 || { echo "setup: python3 venv unavailable; ONNX parity tests will skip"; exit 0; }
"$venv/bin/pip" install -q --disable-pip-version-check onnx==1.23.2 onnxruntime==1.32.0 'numpy<2' \
  || echo "setup: pip could not install onnx/onnxruntime; ONNX parity tests will skip"
exit 0
