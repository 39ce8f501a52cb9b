"""The wheel: carries libhybridnet.so.0 and the cffi module compiled from c_api.h against it;
it works installed, with no LD_LIBRARY_PATH and no compiler."""
import glob
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
    dist = os.environ.get("HN_PYTHON_DIST", "")
    wheels = glob.glob(os.path.join(dist, "hybridnet-*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one built wheel in HN_PYTHON_DIST={dist}, found {wheels}")
    return wheels[0]


def test_wheel_contents(wheel):
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert re.search(rf"hybridnet-\d+\.\d+\.\d+-{tag}-{tag}-linux_\w+\.whl$", wheel)
    names = zipfile.ZipFile(wheel).namelist()
    native = sorted(n for n in names if n.endswith(".so") or ".so." in n)
    assert [n.split(".")[0] for n in native] == ["hybridnet/_hn_cffi", "hybridnet/_native",
                                                 "hybridnet/libhybridnet"]
    assert native[2] == "hybridnet/libhybridnet.so.0"
    assert not [n for n in names if n.endswith(".h") or n.endswith(".c")]
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("/WHEEL"))).decode()
    assert "Root-Is-Purelib: false" in metadata
    assert mx.__version__ == re.search(r"hybridnet-([\d.]+)-", wheel).group(1)


def test_installed_package_loads_its_own_library(source_dir):
    assert mx.__file__.startswith(sys.prefix)  # the virtualenv, not the source tree
    assert os.path.dirname(_LIBRARY) == os.path.dirname(mx.__file__)
    assert not os.path.islink(_LIBRARY)
    extension = sys.modules["hybridnet._hn_cffi"].__file__
    assert os.path.dirname(extension) == os.path.dirname(mx.__file__)
    readelf = subprocess.run(["readelf", "-d", extension], capture_output=True, text=True).stdout
    assert "libhybridnet.so.0" in readelf and "$ORIGIN" in readelf  # found next to it
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
