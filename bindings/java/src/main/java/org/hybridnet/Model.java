package org.hybridnet;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * A loaded model: graph plus weights, from an export of hybridnet or of real MXNet
 * (PREFIX-symbol.json + PREFIX-EEEE.params). Immutable and safe to share between threads; run it
 * with one {@link Predictor} per thread.
 *
 * <pre>{@code
 * try (Model model = Model.load("my_mlp", 0);
 *      Predictor p = model.newPredictor()) {
 *   float[] y = p.forward(x, 1, 512);
 * }
 * }</pre>
 */
public final class Model extends NativeResource {
  private final List<String> inputNames;
  private final List<String> outputNames;

  private Model(long handle, List<String> inputNames, List<String> outputNames) {
    super(handle, HybridnetNative::hn_model_free);
    this.inputNames = inputNames;
    this.outputNames = outputNames;
  }

  /**
   * Loads PREFIX-symbol.json and PREFIX-EEEE.params (EEEE = epoch, 4 digits).
   *
   * @param prefix the path prefix of the two files
   * @param epoch the EEEE of the params file name
   * @return the model (close it)
   */
  public static Model load(String prefix, int epoch) {
    Objects.requireNonNull(prefix, "prefix");
    return adopt(created(out -> HybridnetNative.hn_model_load(prefix, epoch, out)));
  }

  /**
   * Loads PREFIX-symbol.json and PREFIX-EEEE.params.
   *
   * @param prefix the path prefix of the two files
   * @param epoch the EEEE of the params file name
   * @return the model (close it)
   */
  public static Model load(Path prefix, int epoch) {
    return load(prefix.toString(), epoch);
  }

  /**
   * A model from memory: symbol JSON (UTF-8 bytes) and the bytes of a .params file.
   *
   * @param json the symbol JSON as UTF-8 bytes
   * @param params the contents of a .params file
   * @return the model (close it)
   */
  public static Model fromBytes(byte[] json, byte[] params) {
    return adopt(created(out -> HybridnetNative.hn_model_load_from_memory(json, params, out)));
  }

  /**
   * A model from memory: symbol JSON text and the bytes of a .params file.
   *
   * @param json the symbol JSON
   * @param params the contents of a .params file
   * @return the model (close it)
   */
  public static Model fromBytes(String json, byte[] params) {
    return fromBytes(json.getBytes(StandardCharsets.UTF_8), params);
  }

  private static Model adopt(long handle) {
    List<String> in;
    List<String> out;
    try {
      String[][] names = new String[1][];
      HybridnetNative.hn_model_input_names(handle, names);
      in = List.of(names[0]);
      HybridnetNative.hn_model_output_names(handle, names);
      out = List.of(names[0]);
    } catch (RuntimeException e) {
      HybridnetNative.hn_model_free(handle);
      throw e;
    }
    return new Model(handle, in, out);
  }

  /**
   * The data inputs (arguments without a value in the params), in graph order.
   *
   * @return the input names
   */
  public List<String> inputNames() {
    return inputNames;
  }

  /**
   * The output names.
   *
   * @return the output names
   */
  public List<String> outputNames() {
    return outputNames;
  }

  /**
   * The model's graph.
   *
   * @return the graph (close it)
   */
  public Symbol symbol() {
    return new Symbol(call(h -> created(out -> HybridnetNative.hn_model_symbol(h, out))));
  }

  /**
   * MXNet 1.9.1's {@code mx.viz.print_summary} table of this model's graph (see {@link
   * Symbol#summary}).
   *
   * @param inputShapes the data inputs' shapes by name, or null for a table without shapes
   * @return the table, lines ending in newlines
   */
  public String summary(Map<String, long[]> inputShapes) {
    try (Symbol graph = symbol()) {
      return graph.summary(inputShapes);
    }
  }

  /**
   * Writes this model as an ONNX file at opset 17 (see {@link #exportOnnx(String, Map, int,
   * boolean)}).
   *
   * @param path the .onnx file to write
   * @param inputShapes each data input's shape by name
   */
  public void exportOnnx(String path, Map<String, long[]> inputShapes) {
    exportOnnx(path, inputShapes, 0, false);
  }

  /**
   * Writes this model as an ONNX file: the weights as initializers, the input and output names
   * kept. {@code inputShapes} gives the data inputs' shapes (e.g. {@code Map.of("data", new
   * long[] {1, 3, 224, 224})}); {@code opset} is 13 to 21 (0: 17); with {@code dynamicBatch}
   * axis 0 of the inputs is symbolic.
   *
   * @throws HybridnetException.Unsupported listing every node without an exact ONNX form
   *
   * @param path the .onnx file to write
   * @param inputShapes each data input's shape by name
   * @param opset the ONNX opset, 13 to 21, or 0 for 17
   * @param dynamicBatch whether axis 0 of the inputs is symbolic
   */
  public void exportOnnx(String path, Map<String, long[]> inputShapes, int opset,
      boolean dynamicBatch) {
    Objects.requireNonNull(path, "path");
    NamedShapes shapes = new NamedShapes(inputShapes);
    withHandle(
        h ->
            HybridnetNative.hn_model_export_onnx(
                h,
                path,
                opset,
                dynamicBatch ? HybridnetNativeConstants.HN_ONNX_DYNAMIC_BATCH : 0,
                shapes.names.length,
                shapes.names,
                shapes.ndims,
                shapes.dims,
                null));
  }

  /**
   * {@link #exportOnnx(String, Map, int, boolean)} to a Path.
   *
   * @param path the .onnx file to write
   * @param inputShapes each data input's shape by name
   * @param opset the ONNX opset, 13 to 21, or 0 for 17
   * @param dynamicBatch whether axis 0 of the inputs is symbolic
   */
  public void exportOnnx(Path path, Map<String, long[]> inputShapes, int opset,
      boolean dynamicBatch) {
    exportOnnx(path.toString(), inputShapes, opset, dynamicBatch);
  }

  /**
   * A new predictor (executor) of this model; it keeps the weights alive after close().
   *
   * @return the predictor (close it)
   */
  public Predictor newPredictor() {
    return new Predictor(
        call(h -> created(out -> HybridnetNative.hn_predictor_create(h, out))),
        inputNames,
        outputNames);
  }

  @Override
  public String toString() {
    return "Model(inputs=" + inputNames + ", outputs=" + outputNames + (isClosed() ? ", closed)" : ")");
  }
}
