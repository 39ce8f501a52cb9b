"""int8 quantization of Gluon networks, as mxnet.contrib.quantization (MXNet 1.9.1).

    from hybridnet.contrib import quantization
    qnet = quantization.quantize_net(net, calib_data=loader, calib_mode="entropy")
    qnet.export("model-int8")     # loads in MXNet 1.9.1 and in hybridnet

The work is the library's (hn_quantize_model): the graph rewrite into the form MXNet's oneDNN
backend runs and the calibration over the fp32 graph; this module only exports the network,
gathers the calibration batches and imports the result.
"""
import os
import tempfile

import numpy as np

from .._ffi import ffi, lib
from ..base import c_str, check, string_array
from ..context import cpu
from ..gluon.block import SymbolBlock
from ..ndarray import ndarray as _nd

__all__ = ["quantize_net", "quantize_net_v2"]


def _calibration_batches(calib_data):
    """The data of each calibration batch as numpy (the first field of a (data, label) batch)."""
    if isinstance(calib_data, np.ndarray) or isinstance(calib_data, _nd.NDArray):
        yield np.asarray(calib_data.asnumpy() if isinstance(calib_data, _nd.NDArray)
                         else calib_data)
        return
    for batch in calib_data:
        if hasattr(batch, "data") and not isinstance(batch, _nd.NDArray):  # a DataBatch
            batch = batch.data
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        yield batch.asnumpy() if isinstance(batch, _nd.NDArray) else np.asarray(batch)


def quantize_net_v2(network, quantized_dtype="auto", quantize_mode="full",
                    quantize_granularity="tensor-wise", exclude_layers=None,
                    exclude_layers_match=None, exclude_operators=None, calib_data=None,
                    data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                    LayerOutputCollector=None, logger=None, *, int8_weights=False):
    """Quantizes a hybridizable Gluon network to int8 and returns it as a SymbolBlock, with
    MXNet 1.9.1's arguments and meanings. calib_data (a DataLoader, a DataIter, or one array,
    batch first) is required: every range is calibrated ("naive": min/max, "entropy": KL
    thresholds); MXNet's calib_mode "none" and a LayerOutputCollector are refused. The
    calibration batch size is the loader's (entropy thresholds depend on it).

    int8_weights (keyword only, a hybridnet extension MXNet does not have): the convolutions
    keep their weights int8 (BatchNorm folded in, quantized as the op quantizes them) with their
    scales, the same outputs bit for bit from about 4x smaller params; MXNet cannot load such a
    network's export."""
    if calib_mode is None or calib_mode == "none":
        raise ValueError("quantize_net: calib_mode 'none' (ranges found at run time) is not "
                         "supported; use 'naive' or 'entropy' with calib_data")
    if calib_data is None:
        raise ValueError(f"quantize_net: calib_data must be provided when calib_mode={calib_mode}")
    if LayerOutputCollector is not None:
        raise ValueError("quantize_net: a custom LayerOutputCollector is not supported; use "
                         "calib_mode 'naive' or 'entropy'")
    if ctx is not None and ctx != cpu():
        raise ValueError(f"quantize_net: quantized networks run on the CPU, got ctx={ctx}")
    batches = list(_calibration_batches(calib_data))
    if not batches:
        raise ValueError("quantize_net: calib_data yields no batch")
    data = _nd.array(np.ascontiguousarray(np.concatenate(batches), dtype=np.float32))
    if logger:
        logger.info("Quantizing with %d calibration examples", data.shape[0])
    network.hybridize()
    network(_nd.array(batches[0]))  # the export needs a traced graph
    options = {
        "quantized_dtype": quantized_dtype,
        "quantize_mode": quantize_mode,
        "quantize_granularity": quantize_granularity,
        "calib_mode": calib_mode,
        "batch_size": str(len(batches[0])),
        "int8_weights": "true" if int8_weights else "false",
    }
    for key, names in (("exclude_layers", exclude_layers),
                       ("exclude_layers_match", exclude_layers_match),
                       ("exclude_operators", exclude_operators)):
        if names:
            options[key] = ",".join(names)
    if num_calib_examples is not None:
        options["num_calib_examples"] = str(int(num_calib_examples))
    keys, keep_keys = string_array(list(options))
    values, keep_values = string_array([str(v) for v in options.values()])
    with tempfile.TemporaryDirectory() as tmp:
        fp32, int8 = os.path.join(tmp, "fp32"), os.path.join(tmp, "int8")
        network.export(fp32, 0)
        report = ffi.new("char**")
        check(lib.hn_quantize_model(c_str(fp32), 0, data._h, keys, values,
                                    len(options), c_str(int8), report))
        text = ffi.string(report[0]).decode()
        lib.hn_string_free(report[0])
        if logger:
            logger.info("Quantization report: %s", text)
        return SymbolBlock.imports(f"{int8}-symbol.json", ["data"], f"{int8}-0000.params")


def quantize_net(network, quantized_dtype="auto", quantize_mode="full", exclude_layers=None,
                 exclude_layers_match=None, exclude_operators=None, calib_data=None,
                 data_shapes=None, calib_mode="none", num_calib_examples=None, ctx=cpu(),
                 logger=None, quantize_granularity="tensor-wise", LayerOutputCollector=None, *,
                 int8_weights=False):
    """MXNet 1.9.1's quantize_net: quantize_net_v2 with MXNet's positional order, which has no
    quantize_granularity or LayerOutputCollector (accepted here by keyword, after logger), nor
    int8_weights (keyword only; see quantize_net_v2)."""
    return quantize_net_v2(network, quantized_dtype=quantized_dtype, quantize_mode=quantize_mode,
                           quantize_granularity=quantize_granularity,
                           exclude_layers=exclude_layers,
                           exclude_layers_match=exclude_layers_match,
                           exclude_operators=exclude_operators, calib_data=calib_data,
                           data_shapes=data_shapes, calib_mode=calib_mode,
                           num_calib_examples=num_calib_examples, ctx=ctx,
                           LayerOutputCollector=LayerOutputCollector, logger=logger,
                           int8_weights=int8_weights)
