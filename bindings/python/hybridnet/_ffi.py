"""The C API: the cffi module compiled from c_api.h when the wheel was built (_hn_cffi), linked
to libhybridnet.so.0, which the wheel carries next to this file."""
import os

try:
    from ._hn_cffi import ffi, lib
except ImportError as e:  # a damaged install, or a system library (OpenBLAS) missing
    raise ImportError(f"hybridnet: cannot load the library's binding: {e}") from e

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libhybridnet.so.0")

if lib.hn_abi_version() != lib.HN_ABI_VERSION:
    raise ImportError(f"hybridnet: {_LIBRARY} has ABI {lib.hn_abi_version()}, this package was "
                      f"built for ABI {lib.HN_ABI_VERSION}; reinstall the wheel")

NULL = ffi.NULL
