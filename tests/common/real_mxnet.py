"""Real MXNet 1.9.1 for the scripts that check hybridnet against it, or their skip (exit 77, the
SKIP_RETURN_CODE of their tests) saying why it is missing and how to install it."""
import sys
import warnings


def import_or_skip():
    """(numpy, mxnet) imported, with warnings silenced; exits 77 when either does not import."""
    try:
        warnings.filterwarnings("ignore")
        import numpy as np
        import mxnet as mx
    except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
        print(f"SKIP: real MXNet is not importable by {sys.executable} ({e}); "
              "run scripts/setup-mxnet.sh to install mxnet==1.9.1 for the golden tests")
        sys.exit(77)
    return np, mx
