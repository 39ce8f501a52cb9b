package org.hybridnet;

import java.util.Map;

/**
 * Named shapes in the C API's form: the names, each one's rank, and every dimension in order
 * (hn_symbol_infer_shape, hn_model_export_onnx).
 */
final class NamedShapes {
  final String[] names;
  final int[] ndims;
  final long[] dims;

  NamedShapes(Map<String, long[]> shapes) {
    names = new String[shapes.size()];
    ndims = new int[shapes.size()];
    int total = 0;
    for (long[] shape : shapes.values()) total += shape.length;
    dims = new long[total];
    int i = 0;
    int offset = 0;
    for (Map.Entry<String, long[]> e : shapes.entrySet()) {
      names[i] = e.getKey();
      ndims[i] = e.getValue().length;
      System.arraycopy(e.getValue(), 0, dims, offset, ndims[i]);
      offset += ndims[i];
      ++i;
    }
  }
}
