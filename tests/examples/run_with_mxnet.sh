#!/usr/bin/env bash
# Runs an example script with the Python that has real MXNet 1.9.1 (and scikit-learn, for the
# digits), or skips (exit 77, the tests' SKIP_RETURN_CODE) saying which is missing.
#
#   run_with_mxnet.sh PYTHON SCRIPT.py ARGS...
set -u
python=$1
shift
if ! missing=$("$python" -c "import mxnet, sklearn" 2>&1); then
  echo "SKIP: $python cannot import mxnet and sklearn (${missing##*$'\n'});" \
       "scripts/setup-mxnet.sh installs mxnet==1.9.1 and scikit-learn"
  exit 77
fi
exec env PYTHONDONTWRITEBYTECODE=1 "$python" "$@"
