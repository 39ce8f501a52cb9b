"""The C API: cffi declarations generated from c_api.h at build time (_hn_cffi) and
libhybridnet.so.0, which the wheel carries next to this file."""
import os

from ._hn_cffi import ffi

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libhybridnet.so.0")

try:
    lib = ffi.dlopen(_LIBRARY)
except OSError as e:  # a damaged install, or a system library (OpenBLAS) missing
    raise ImportError(f"hybridnet: cannot load {_LIBRARY}: {e}") from e

if lib.hn_abi_version() != lib.HN_ABI_VERSION:
    raise ImportError(f"hybridnet: {_LIBRARY} has ABI {lib.hn_abi_version()}, this package was "
                      f"built for ABI {lib.HN_ABI_VERSION}; reinstall the wheel")

NULL = ffi.NULL
