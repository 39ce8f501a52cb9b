package org.hybridnet;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * A graph (MXNet symbol): immutable; every operation returns a new Symbol. Written and read as
 * MXNet 1.x JSON.
 *
 * <pre>{@code
 * try (Symbol data = Symbol.var("data");
 *      Symbol fc = Symbol.create("FullyConnected", Map.of("num_hidden", "2"), "fc1", data)) {
 *   System.out.println(fc.toJson());
 * }
 * }</pre>
 */
public final class Symbol extends NativeResource {
  Symbol(long handle) {
    super(handle, HybridnetNative::hn_symbol_free);
  }

  /**
   * A variable (graph input).
   *
   * @param name the variable's name
   * @return the variable (close it)
   */
  public static Symbol var(String name) {
    return new Symbol(created(out -> HybridnetNative.hn_symbol_var(name, out)));
  }

  /**
   * Applies op {@code op} to {@code inputs}; missing trailing inputs become variables named
   * "NAME_INPUT" ("fc1_weight"). {@code name} null picks one.
   *
   * @param op the op's name or alias
   * @param attrs its attributes as MXNet writes them (null for none)
   * @param name the node's name, or null
   * @param inputs the inputs given, in order
   * @return the op's output(s) (close it)
   */
  public static Symbol create(String op, Map<String, String> attrs, String name, Symbol... inputs) {
    String[][] kv = Op.attributes(attrs);
    return new Symbol(
        callAll(
            inputs,
            handles ->
                created(
                    out ->
                        HybridnetNative.hn_symbol_create(
                            op, handles, kv[0], kv[1], kv[0].length, name, out))));
  }

  /**
   * The outputs of several symbols as one multi-output symbol.
   *
   * @param symbols the symbols whose outputs are joined, in order
   * @return the group (close it)
   */
  public static Symbol group(Symbol... symbols) {
    return new Symbol(
        callAll(symbols, handles -> created(out -> HybridnetNative.hn_symbol_group(handles, out))));
  }

  /**
   * Parses symbol JSON (MXNet 0.8 to 1.9; older layouts are upgraded).
   *
   * @param json the JSON text
   * @return the graph (close it)
   */
  public static Symbol fromJson(String json) {
    return new Symbol(created(out -> HybridnetNative.hn_symbol_from_json(json, out)));
  }

  /**
   * Reads a symbol JSON file.
   *
   * @param path the JSON file
   * @return the graph (close it)
   */
  public static Symbol load(Path path) {
    return new Symbol(created(out -> HybridnetNative.hn_symbol_load(path.toString(), out)));
  }

  /**
   * Writes MXNet 1.9 JSON.
   *
   * @param path the file to write
   */
  public void save(Path path) {
    withHandle(h -> HybridnetNative.hn_symbol_save(h, path.toString()));
  }

  /**
   * MXNet 1.9 JSON text.
   *
   * @return the JSON text
   */
  public String toJson() {
    String[] out = new String[1];
    withHandle(h -> HybridnetNative.hn_symbol_to_json(h, out));
    return out[0];
  }

  /**
   * Output {@code index} as a symbol of its own.
   *
   * @param index the output's position
   * @return the output (close it)
   */
  public Symbol output(int index) {
    return new Symbol(call(h -> created(out -> HybridnetNative.hn_symbol_output(h, index, out))));
  }

  /**
   * The argument variables (inputs and weights), in graph order.
   *
   * @return the argument names
   */
  public List<String> listArguments() {
    return names(HybridnetNative::hn_symbol_list_arguments);
  }

  /**
   * The output names.
   *
   * @return the output names
   */
  public List<String> listOutputs() {
    return names(HybridnetNative::hn_symbol_list_outputs);
  }

  /**
   * The auxiliary states (e.g. BatchNorm's moving statistics).
   *
   * @return the auxiliary state names
   */
  public List<String> listAuxiliaryStates() {
    return names(HybridnetNative::hn_symbol_list_auxiliary_states);
  }

  /**
   * Infers every shape from the {@code known} ones (e.g. {@code Map.of("data", new long[] {1,
   * 512})}).
   *
   * @throws HybridnetException.Shape on conflicts or when a shape stays unknown
   *
   * @param known the known shapes by variable name
   * @return every argument's, output's and auxiliary state's shape
   */
  public Shapes inferShape(Map<String, long[]> known) {
    NamedShapes shapes = new NamedShapes(known);
    long info =
        call(
            h ->
                created(
                    out ->
                        HybridnetNative.hn_symbol_infer_shape(
                            h,
                            shapes.names.length,
                            shapes.names,
                            shapes.ndims,
                            shapes.dims,
                            0,
                            out)));
    try {
      return new Shapes(
          group(info, HybridnetNativeConstants.HN_SHAPES_ARGUMENTS),
          group(info, HybridnetNativeConstants.HN_SHAPES_OUTPUTS),
          group(info, HybridnetNativeConstants.HN_SHAPES_AUXILIARY_STATES));
    } finally {
      HybridnetNative.hn_shape_info_free(info);
    }
  }

  /**
   * MXNet 1.9.1's {@code mx.viz.print_summary} table of this graph, byte for byte: one row per
   * layer with its output shape (without the batch axis), its parameter count and the layers it
   * reads, then the total.
   *
   * @throws HybridnetException.Shape when the shapes leave a layer's shape unknown (naming the
   *     input)
   *
   * @param inputShapes the data inputs' shapes by name, or null for a table without shapes
   * @return the table, lines ending in newlines
   */
  public String summary(Map<String, long[]> inputShapes) {
    NamedShapes shapes = new NamedShapes(inputShapes == null ? Map.of() : inputShapes);
    String[] out = new String[1];
    withHandle(
        h ->
            HybridnetNative.hn_symbol_print_summary(
                h, shapes.names.length, shapes.names, shapes.ndims, shapes.dims, 0, null, 0, out));
    return out[0];
  }

  /**
   * MXNet 1.9.1's {@code mx.viz.plot_network} drawing of this graph as Graphviz DOT source (its
   * nodes, labels, colours and edges; render it with Graphviz's {@code dot}).
   *
   * @param inputShapes the data inputs' shapes by name (edges show them), or null
   * @param hideWeights whether to leave out the weight, bias and BatchNorm variables
   * @return the DOT text
   */
  public String plotNetwork(Map<String, long[]> inputShapes, boolean hideWeights) {
    NamedShapes shapes = new NamedShapes(inputShapes == null ? Map.of() : inputShapes);
    String[] out = new String[1];
    withHandle(
        h ->
            HybridnetNative.hn_symbol_plot_network(
                h, "plot", shapes.names.length, shapes.names, shapes.ndims, shapes.dims, 0, null,
                null, 0, null, null, hideWeights ? 1 : 0, out));
    return out[0];
  }

  /** A name list of this symbol ({@code lister} is one of the hn_symbol_list_* functions). */
  private List<String> names(BiConsumer<Long, String[][]> lister) {
    String[][] out = new String[1][];
    withHandle(h -> lister.accept(h, out));
    return List.of(out[0]);
  }

  private static Map<String, long[]> group(long info, int group) {
    long[] count = new long[1];
    HybridnetNative.hn_shape_info_count(info, group, count);
    Map<String, long[]> shapes = new LinkedHashMap<>();
    String[] name = new String[1];
    long[][] dims = new long[1][];
    for (long i = 0; i < count[0]; ++i) {
      HybridnetNative.hn_shape_info_get(info, group, i, name, dims);
      shapes.put(name[0], dims[0]);
    }
    return Collections.unmodifiableMap(shapes);
  }

  @Override
  public String toString() {
    if (isClosed()) return "Symbol(closed)";
    return "Symbol" + listOutputs();
  }

  /** The result of {@link #inferShape}: name -> dimensions, in graph order. */
  public static final class Shapes {
    private final Map<String, long[]> arguments;
    private final Map<String, long[]> outputs;
    private final Map<String, long[]> auxiliaryStates;

    Shapes(Map<String, long[]> arguments, Map<String, long[]> outputs, Map<String, long[]> aux) {
      this.arguments = arguments;
      this.outputs = outputs;
      this.auxiliaryStates = aux;
    }

    /**
     * The arguments' shapes.
     *
     * @return name to dimensions, in graph order
     */
    public Map<String, long[]> arguments() {
      return arguments;
    }

    /**
     * The outputs' shapes.
     *
     * @return name to dimensions, in graph order
     */
    public Map<String, long[]> outputs() {
      return outputs;
    }

    /**
     * The auxiliary states' shapes.
     *
     * @return name to dimensions, in graph order
     */
    public Map<String, long[]> auxiliaryStates() {
      return auxiliaryStates;
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder("Shapes{outputs=");
      for (Map.Entry<String, long[]> e : outputs.entrySet()) {
        sb.append(e.getKey()).append(Arrays.toString(e.getValue())).append(' ');
      }
      return sb.append('}').toString();
    }
  }
}
