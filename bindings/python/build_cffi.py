"""Builds hybridnet/_hn_cffi, the package's binding of the C API, from c_api.h itself.

cffi's out-of-line API mode: the declarations of c_api.h are compiled, at wheel-build time, into
a small extension module that calls libhybridnet.so.0 directly (linked next to it, RUNPATH
$ORIGIN: no LD_LIBRARY_PATH, no compiler where the wheel is installed). c_api.h is the one source
of the declarations; this file only strips what cffi's parser does not take (comments, includes,
the export and noexcept macros) with a small preprocessor for the header's own conditionals.
(API mode rather than ABI mode or ctypes: a call costs about a third of ctypes' and less than ABI
mode's, which the Predictor's budget of 3 us over C needs; bench/python_mlp_bench.py measures.)

    python3 build_cffi.py C_API_H PACKAGE_DIR TMP_DIR    (PACKAGE_DIR holds libhybridnet.so.0)
"""
import os
import re
import shutil
import sys

# Python-side interop structures (DLPack 0.x, the unversioned DLManagedTensor every NumPy
# since 1.22 exchanges): not part of the library's API, defined here (for the compiler and for
# cffi) so the package builds and reads them with the same FFI.
DLPACK_CDEF = """
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
  void* data; DLDevice device; int32_t ndim; DLDataType dtype;
  int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor; void* manager_ctx; void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;
"""

_DIRECTIVE = re.compile(r"#\s*(\w+)\s*(.*)")


def _condition(expression, defined):
    """The value of the header's #if/#elif conditions: defined(NAME) terms joined by && / ||."""
    text = re.sub(r"defined\s*\(\s*(\w+)\s*\)", lambda m: "1" if m.group(1) in defined else "0",
                  expression)
    text = text.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    if not re.fullmatch(r"[\s01()andortn]*", text):
        raise ValueError(f"c_api.h: unsupported preprocessor condition '{expression}'")
    return bool(eval(text))  # noqa: S307 - only 0/1 and boolean operators reach here


def cdef_from_header(text):
    """c_api.h reduced to the C declarations cffi parses, plus its integer #defines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    defined = set()
    empty_macros = set()
    lines = []
    # Each open conditional: [taking lines now, a branch was taken already, parent active].
    stack = []

    def active():
        return all(level[0] for level in stack)

    for line in text.splitlines():
        directive = _DIRECTIVE.match(line.strip())
        if not directive:
            if active():
                lines.append(line)
            continue
        name, rest = directive.group(1), directive.group(2).strip()
        if name in ("ifdef", "ifndef", "if"):
            parent = active()
            if name == "ifdef":
                value = rest in defined
            elif name == "ifndef":
                value = rest not in defined
            else:
                value = _condition(rest, defined)
            stack.append([parent and value, value, parent])
        elif name == "elif":
            level = stack[-1]
            value = not level[1] and _condition(rest, defined)
            level[0] = level[2] and value
            level[1] = level[1] or value
        elif name == "else":
            level = stack[-1]
            level[0] = level[2] and not level[1]
            level[1] = True
        elif name == "endif":
            stack.pop()
        elif name == "define":
            if not active():
                continue
            parts = rest.split(None, 1)
            defined.add(parts[0])
            value = parts[1].strip() if len(parts) > 1 else ""
            if re.fullmatch(r"-?\d+", value):
                lines.append(f"#define {parts[0]} {value}")
            elif not value:
                empty_macros.add(parts[0])
        elif name == "include":
            continue
        else:
            raise ValueError(f"c_api.h: unsupported preprocessor directive '#{name}'")
    if stack:
        raise ValueError("c_api.h: unterminated #if")
    body = "\n".join(lines)
    for macro in empty_macros:
        body = re.sub(rf"\b{macro}\b", "", body)
    # What remains of the extern "C" wrapper under __cplusplus is already gone; stray braces
    # would mean the header grew a construct this reducer does not know.
    if re.search(r'extern\s+"C"', body):
        raise ValueError('c_api.h: extern "C" outside #ifdef __cplusplus')
    return body


def build(header_path, package_dir, tmp_dir):
    """Compiles hybridnet._hn_cffi against c_api.h and PACKAGE_DIR/libhybridnet.so.0 and puts
    the extension module into PACKAGE_DIR; returns its path."""
    import cffi  # build-time only

    with open(header_path, encoding="utf-8") as f:
        cdef = cdef_from_header(f.read())
    include_dir = os.path.dirname(os.path.dirname(os.path.abspath(header_path)))
    ffi = cffi.FFI()
    ffi.cdef(cdef + DLPACK_CDEF)
    ffi.set_source("hybridnet._hn_cffi", '#include "hybridnet/c_api.h"\n' + DLPACK_CDEF,
                   include_dirs=[include_dir], library_dirs=[os.path.abspath(package_dir)],
                   libraries=[":libhybridnet.so.0"], extra_link_args=["-Wl,-rpath,$ORIGIN"])
    built = ffi.compile(tmpdir=tmp_dir)
    target = os.path.join(package_dir, os.path.basename(built))
    shutil.copyfile(built, target)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: build_cffi.py C_API_H PACKAGE_DIR TMP_DIR")
    build(*sys.argv[1:])
