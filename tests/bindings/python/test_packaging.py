"""The wheel: one platform wheel for every Python 3, carrying libhybridnet.so.0 and the cffi
declarations generated from c_api.h; it works installed, with no LD_LIBRARY_PATH and no
compiler."""
import os
import re
import subprocess
import sys
import zipfile

import pytest

import hybridnet as mx
from hybridnet._ffi import _LIBRARY, lib


@pytest.fixture(scope="module")
def wheel():
    path = os.environ.get("HN_PYTHON_WHEEL")
    if not path or not os.path.exists(path):
        pytest.fail(f"the built wheel HN_PYTHON_WHEEL={path} is missing")
    return path


def test_wheel_contents(wheel):
    assert re.search(r"hybridnet-\d+\.\d+\.\d+-py3-none-linux_\w+\.whl$", wheel)
    names = zipfile.ZipFile(wheel).namelist()
    assert "hybridnet/libhybridnet.so.0" in names and "hybridnet/_hn_cffi.py" in names
    # no compiled extension module: cffi's ABI mode, so any Python 3 takes the same wheel
    assert [n for n in names if n.endswith(".so") or ".so." in n] == ["hybridnet/libhybridnet.so.0"]
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("/WHEEL"))).decode()
    assert "Root-Is-Purelib: false" in metadata
    assert mx.__version__ == re.search(r"hybridnet-([\d.]+)-", wheel).group(1)


def test_installed_package_loads_its_own_library(source_dir):
    assert mx.__file__.startswith(sys.prefix)  # the virtualenv, not the source tree
    assert os.path.dirname(_LIBRARY) == os.path.dirname(mx.__file__)
    assert not os.path.islink(_LIBRARY)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = ("import hybridnet as mx; from hybridnet.gluon import nn; n = nn.Dense(2); "
            "n.initialize(); print(n(mx.nd.ones((1, 3))).shape)")
    run = subprocess.run([sys.executable, "-c", code], cwd="/", env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0 and run.stdout.strip() == "(1, 2)", run.stderr
    ldd = subprocess.run(["ldd", _LIBRARY], capture_output=True, text=True)
    assert "not found" not in ldd.stdout


def test_every_c_api_function_is_declared(source_dir):
    with open(os.path.join(source_dir, "c_api", "include", "hybridnet", "c_api.h")) as f:
        header = f.read()
    functions = re.findall(r"HN_API\s+[\w\s\*]+?\b(hn_\w+)\(", header)
    assert len(functions) > 100
    missing = [name for name in functions if not hasattr(lib, name)]
    assert not missing
    assert lib.hn_abi_version() == lib.HN_ABI_VERSION
