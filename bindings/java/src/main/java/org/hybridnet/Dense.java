package org.hybridnet;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A fully connected layer: {@code activation(x * W^T + b)}. The input size is inferred at the
 * first forward unless given.
 */
public final class Dense extends HybridBlock {
  /**
   * {@code units} outputs, no activation.
   *
   * @param units the output size, at least 1
   */
  public Dense(int units) {
    this(units, null);
  }

  /**
   * {@code units} outputs and an activation ("relu", "sigmoid", "tanh", "softrelu", "softsign").
   *
   * @param units the output size, at least 1
   * @param activation the activation, or null (or "") for none
   */
  public Dense(int units, String activation) {
    super(create("Dense", attrs("units", units, "activation", activation)));
  }

  /**
   * With MXNet's other options as strings: use_bias, flatten, in_units, weight_initializer,
   * bias_initializer, prefix (e.g. {@code Map.of("in_units", "512", "use_bias", "False")}).
   *
   * @param units the output size, at least 1
   * @param activation the activation, or null (or "") for none
   * @param options MXNet's keyword arguments by name, values as MXNet writes them
   */
  public Dense(int units, String activation, Map<String, String> options) {
    super(create("Dense", merge(attrs("units", units, "activation", activation), options)));
  }

  private static Map<String, String> merge(Map<String, String> a, Map<String, String> b) {
    Map<String, String> m = new LinkedHashMap<>(a);
    if (b != null) m.putAll(b);
    return m;
  }
}
