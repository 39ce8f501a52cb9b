"""Builds the hybridnet wheel: the Python package, its cffi binding compiled from c_api.h and
libhybridnet.so.0 next to them (no compiler or LD_LIBRARY_PATH needed where it installs).

    pip wheel --no-build-isolation bindings/python      # or: pip install bindings/python

The library comes from HYBRIDNET_LIBRARY (a built libhybridnet.so.0: the CMake build passes
its own) or is built here with CMake from the repository this folder belongs to (cmake, a C++17
compiler, libopenblas-dev and nlohmann-json3-dev needed; HYBRIDNET_CMAKE_ARGS adds options).
HYBRIDNET_INCLUDE_DIR points at the C API headers when this folder was copied elsewhere.

setuptools rather than scikit-build-core: Debian 12 packages setuptools, wheel and cffi but not
scikit-build-core, and the native steps are small ones a few lines here do: building one
CMake target (the library), compiling cffi's module (build_cffi.py) and setuptools' own build of
hybridnet/_native.c (the per-step paths in C: releasing arrays, a block's call).
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
LIBRARY_NAME = "libhybridnet.so.0"


def header_path():
    include = os.environ.get("HYBRIDNET_INCLUDE_DIR") or os.path.join(REPO, "c_api", "include")
    path = os.path.join(include, "hybridnet", "c_api.h")
    if not os.path.isfile(path):
        sys.exit(f"hybridnet: {path} not found; build from the repository's bindings/python folder "
                 "or set HYBRIDNET_INCLUDE_DIR to the folder holding hybridnet/c_api.h")
    return path


def library_version():
    with open(header_path(), encoding="utf-8") as f:
        match = re.search(r'#define HN_VERSION_STRING "([^"]+)"', f.read())
    if not match:
        sys.exit("hybridnet: HN_VERSION_STRING not found in c_api.h")
    return match.group(1)


def build_library(build_temp):
    """libhybridnet.so.0 built with CMake from the repository (only the C API target)."""
    if not os.path.isfile(os.path.join(REPO, "CMakeLists.txt")):
        sys.exit("hybridnet: no HYBRIDNET_LIBRARY given and no repository to build one from "
                 f"at {REPO}")
    build_dir = os.path.join(os.path.abspath(build_temp), "cmake")
    args = ["cmake", "-S", REPO, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DHN_BUILD_TESTS=OFF", "-DHN_BUILD_BENCH=OFF", "-DHN_BUILD_JAVA=OFF",
            "-DHN_BUILD_SCALA=OFF", "-DHN_BUILD_R=OFF", "-DHN_BUILD_PYTHON=OFF"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    args += os.environ.get("HYBRIDNET_CMAKE_ARGS", "").split()
    subprocess.check_call(args)
    subprocess.check_call(["cmake", "--build", build_dir, "--target", "hn_c_api",
                           "-j", str(os.cpu_count() or 1)])
    return os.path.join(build_dir, "lib", LIBRARY_NAME)


class BuildWithLibrary(build_py):
    """The Python files, plus the library and the cffi module compiled against it."""

    def run(self):
        super().run()
        sys.path.insert(0, HERE)
        import build_cffi

        build_temp = self.get_finalized_command("build").build_temp
        package_dir = os.path.join(self.build_lib, "hybridnet")
        library = os.environ.get("HYBRIDNET_LIBRARY") or build_library(build_temp)
        if not os.path.isfile(library):
            sys.exit(f"hybridnet: the library {library} does not exist")
        # A copy of the file itself (never a symlink), under its SONAME.
        shutil.copyfile(os.path.realpath(library), os.path.join(package_dir, LIBRARY_NAME))
        self._module = build_cffi.build(header_path(), package_dir, os.path.join(build_temp, "cffi"))

    def get_outputs(self, *args, **kwargs):
        package_dir = os.path.join(self.build_lib, "hybridnet")
        extra = [os.path.join(package_dir, LIBRARY_NAME)]
        if getattr(self, "_module", None):
            extra.append(self._module)
        return super().get_outputs(*args, **kwargs) + extra


class BuildNative(build_ext):
    """hybridnet._native, compiled against c_api.h and linked to the package's library (copied
    by build_py) with $ORIGIN as its search path, as the cffi module is."""

    def build_extension(self, ext):
        self.run_command("build_py")
        include_dir = os.path.dirname(os.path.dirname(header_path()))
        package_dir = os.path.abspath(os.path.join(self.get_finalized_command("build_py").build_lib,
                                                   "hybridnet"))
        ext.include_dirs = [include_dir]
        ext.library_dirs = [package_dir]
        ext.libraries = [":" + LIBRARY_NAME]
        ext.extra_link_args = ["-Wl,-rpath,$ORIGIN"]
        super().build_extension(ext)


commands = {"build_py": BuildWithLibrary, "build_ext": BuildNative}

setup(
    name="hybridnet",
    version=library_version(),
    description="MXNet's Gluon workflow and files on today's Python and NumPy, over hybridnet's C API",
    long_description=open(os.path.join(HERE, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.9",
    install_requires=["numpy>=1.22", "cffi>=1.15"],
    packages=["hybridnet", "hybridnet.ndarray", "hybridnet.symbol", "hybridnet.gluon",
              "hybridnet.gluon.nn", "hybridnet.gluon.model_zoo", "hybridnet.gluon.data",
              "hybridnet.gluon.data.vision", "hybridnet.contrib"],
    ext_modules=[Extension("hybridnet._native", ["hybridnet/_native.c"])],
    cmdclass=commands,
    zip_safe=False,
)
