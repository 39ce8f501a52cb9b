#!/usr/bin/env bash
# The peer benchmark's references (benchmark-time only; nothing of the build, the tests or the
# runtime uses them): ONNX Runtime from PyPI's `onnxruntime` wheel (its libonnxruntime.so, run
# through its C API) in a virtualenv under ~/.cache/hybridnet, and PyTorch (Debian
# python3-torch, to make the ONNX files). Prints the path of libonnxruntime.so on its last line;
# exits 77 when a reference cannot be installed (the peer benchmark then says so and is skipped).
set -u
venv=${HN_ORT_VENV:-$HOME/.cache/hybridnet/onnxruntime}
if ! "$venv/bin/python" -c "import onnxruntime" >/dev/null 2>&1; then
  echo "setup: installing onnxruntime into $venv (peer benchmark)" >&2
  if ! python3 -m venv "$venv" >/dev/null 2>&1 \
     || ! "$venv/bin/pip" install -q --disable-pip-version-check onnxruntime >&2; then
    echo "setup: could not install the onnxruntime wheel into $venv" >&2
    exit 77
  fi
fi
if ! /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
  bash "$(dirname "$0")/setup.sh" bench >&2 || true
  if ! /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
    echo "setup: PyTorch (Debian python3-torch) is not importable by /usr/bin/python3" >&2
    exit 77
  fi
fi
lib=$("$venv/bin/python" - <<'EOF'
import glob, os, onnxruntime
found = sorted(glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), "capi",
                                      "libonnxruntime.so*")))
print(found[0] if found else "")
EOF
)
if [ -z "$lib" ]; then
  echo "setup: the onnxruntime wheel in $venv carries no libonnxruntime.so" >&2
  exit 77
fi
echo "$lib"
