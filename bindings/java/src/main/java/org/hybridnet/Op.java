package org.hybridnet;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * Eager operators: every op of the native registry by its MXNet name, with MXNet's string
 * attributes.
 *
 * <pre>{@code
 * try (NDArray y = Op.invoke1("FullyConnected", Map.of("num_hidden", "64"), x, w, b)) { ... }
 * }</pre>
 */
public final class Op {
  private static final int MAX_OUTPUTS = 16;

  static {
    org.hybridnet.internal.NativeLoader.load();
  }

  private Op() {}

  /**
   * Runs op {@code name} on {@code inputs}; returns its outputs (close each).
   *
   * @param name the op's name or alias
   * @param attrs its attributes as MXNet writes them (null for none)
   * @param inputs the inputs, in order
   * @return the outputs
   */
  public static NDArray[] invoke(String name, Map<String, String> attrs, NDArray... inputs) {
    String[][] kv = attributes(attrs);
    long[] outputs = new long[MAX_OUTPUTS];
    NativeResource.callAll(
        inputs,
        handles ->
            HybridnetNative.hn_op_invoke(name, handles, kv[0], kv[1], kv[0].length, outputs));
    return NDArray.wrapOutputs(outputs);
  }

  /**
   * Runs a single-output op (further outputs, if any, are freed).
   *
   * @param name the op's name or alias
   * @param attrs its attributes as MXNet writes them (null for none)
   * @param inputs the inputs, in order
   * @return the first output (close it)
   */
  public static NDArray invoke1(String name, Map<String, String> attrs, NDArray... inputs) {
    NDArray[] out = invoke(name, attrs, inputs);
    for (int i = 1; i < out.length; ++i) out[i].close();
    return out[0];
  }

  /**
   * The names of every public op, sorted.
   *
   * @return the op names
   */
  public static List<String> names() {
    long[] count = new long[1];
    HybridnetNative.hn_op_count(count);
    List<String> names = new ArrayList<>();
    String[] name = new String[1];
    for (long i = 0; i < count[0]; ++i) {
      HybridnetNative.hn_op_name(i, name);
      names.add(name[0]);
    }
    return names;
  }

  /**
   * The description of op {@code name} (the same text every binding's docs show).
   *
   * @param name the op's name or alias
   * @return its description
   */
  public static String describe(String name) {
    String[] description = new String[1];
    HybridnetNative.hn_op_info(name, description, null, null);
    return description[0];
  }

  /**
   * Whether op {@code name} has a gradient (can be on the way of a backward).
   *
   * @param name the op's name or alias
   * @return true when backward can run through it
   */
  public static boolean hasGradient(String name) {
    int[] out = new int[1];
    HybridnetNative.hn_op_has_gradient(name, out);
    return out[0] != 0;
  }

  /** Parallel key and value arrays of a map (empty for null). */
  static String[][] attributes(Map<String, String> attrs) {
    int n = attrs == null ? 0 : attrs.size();
    String[] keys = new String[n];
    String[] values = new String[n];
    int i = 0;
    if (attrs != null) {
      for (Map.Entry<String, String> e : attrs.entrySet()) {
        keys[i] = e.getKey();
        values[i] = e.getValue();
        ++i;
      }
    }
    return new String[][] {keys, values};
  }
}
