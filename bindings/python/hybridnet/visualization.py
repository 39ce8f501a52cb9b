"""MXNet's visualization module (mx.viz): print_summary's layer table and plot_network's
Graphviz drawing, both made by the library (hn_symbol_print_summary, hn_symbol_plot_network) so
every binding shows the same text.

    mx.viz.print_summary(sym, shape={"data": (1, 3, 224, 224)})
    dot = mx.viz.plot_network(sym, shape={"data": (1, 3, 224, 224)})
    dot.source            # the DOT text
    dot.render("net")     # net.pdf, through Graphviz's `dot` program
"""
import os
import shutil
import subprocess

from ._ffi import NULL, ffi, lib
from .base import c_str, check, dtype_code, error, string_array
from .symbol.symbol import Symbol

__all__ = ["print_summary", "plot_network", "Digraph"]


def _take_string(out):
    try:
        return ffi.string(out[0]).decode("utf-8")
    finally:
        lib.hn_string_free(out[0])


def _shape_arrays(shape):
    """(count, names, ndims, dims, buffers to keep) of a {name: shape} dict (None: none)."""
    if shape is None:
        return 0, NULL, NULL, NULL, None
    names, keep = string_array(list(shape))
    shapes = [tuple(int(d) for d in s) for s in shape.values()]
    ndims = ffi.new("int[]", [len(s) for s in shapes] or [0])
    dims = ffi.new("int64_t[]", [d for s in shapes for d in s] or [0])
    return len(shapes), names, ndims, dims, (keep, names)


def _check_symbol(symbol):
    if not isinstance(symbol, Symbol):
        raise TypeError("symbol must be a Symbol")


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Prints MXNet 1.9.1's layer table of `symbol` (byte for byte): each layer's output shape
    without the batch axis, its parameter count and the layers it reads. `shape` maps input
    names to shapes (None: no shape column)."""
    _check_symbol(symbol)
    count, names, ndims, dims, keep = _shape_arrays(shape)
    places = ffi.new("double[]", [float(p) for p in positions])
    out = ffi.new("char**")
    check(lib.hn_symbol_print_summary(symbol._h, count, names, ndims, dims, int(line_length),
                                      places, len(positions), out))
    print(_take_string(out), end="")


class Digraph:
    """What plot_network returns, in the shape of graphviz.Digraph: .source is the DOT text,
    render() and pipe() run Graphviz's `dot` program (an error says so when it is missing)."""

    def __init__(self, source, name="plot", format="pdf"):
        self.source = source
        self.name = name
        self.format = format

    def __str__(self):
        return self.source

    def _repr_svg_(self):
        return self.pipe("svg").decode("utf-8")

    @staticmethod
    def _dot():
        program = shutil.which("dot")
        if program is None:
            raise error("HN_ERR_UNSUPPORTED", "rendering needs Graphviz's `dot` program, which is "
                        "not installed (Debian: apt-get install graphviz); .source holds the DOT "
                        "text")
        return program

    def pipe(self, format=None):
        """The rendered bytes in `format` (default: this graph's format)."""
        result = subprocess.run([self._dot(), "-T" + (format or self.format)],
                                input=self.source.encode("utf-8"), capture_output=True)
        if result.returncode != 0:
            raise error("HN_ERR_IO", "Graphviz's dot failed: " + result.stderr.decode().strip())
        return result.stdout

    def save(self, filename=None, directory=None):
        """Writes the DOT text to FILENAME (default NAME.gv) and returns its path."""
        path = os.path.join(directory or "", filename or self.name + ".gv")
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source + "\n")
        return path

    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None):
        """Writes the DOT text and FILE.FORMAT rendered by Graphviz; returns the rendered path
        (view is not supported here: open the file)."""
        self._dot()
        path = self.save(filename, directory)
        rendered = path + "." + (format or self.format)
        with open(rendered, "wb") as f:
            f.write(self.pipe(format))
        if cleanup:
            os.remove(path)
        return rendered


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None, node_attrs={},
                 hide_weights=True):
    """MXNet 1.9.1's drawing of `symbol` (its nodes, labels, colours and edges) as a Digraph.
    `shape` and `dtype` ({input name: shape or dtype}) label the edges; `node_attrs` override
    Graphviz's node attributes; hide_weights hides *_weight, *_bias, ... inputs."""
    _check_symbol(symbol)
    count, names, ndims, dims, keep = _shape_arrays(shape)
    type_names, type_keep = string_array(list(dtype or {}))
    type_codes = ffi.new("int[]", [dtype_code(t) for t in (dtype or {}).values()] or [0])
    keys, key_keep = string_array([str(k) for k in node_attrs])
    values, value_keep = string_array([str(v) for v in node_attrs.values()])
    out = ffi.new("char**")
    check(lib.hn_symbol_plot_network(symbol._h, c_str(title), count, names, ndims, dims,
                                     len(dtype or {}), type_names, type_codes, len(node_attrs),
                                     keys, values, int(bool(hide_weights)), out))
    return Digraph(_take_string(out), title, save_format)
