package org.hybridnet;

import java.util.Map;

/**
 * A hybrid block of any kind {@code hn_block_create} makes, by MXNet's class name, with MXNet's
 * keyword arguments as strings: the layers without a class of their own here.
 *
 * <pre>{@code
 * new Layer("Conv2D", Map.of("channels", "32", "kernel_size", "3", "activation", "relu"))
 * new Layer("MaxPool2D", Map.of("pool_size", "2"))
 * }</pre>
 */
public final class Layer extends HybridBlock {
  /**
   * A layer of {@code kind} with MXNet's defaults.
   *
   * @param kind MXNet's class name ("Conv2D", "MaxPool2D", "BatchNorm", ...)
   * @throws HybridnetException.NotFound for an unknown kind (the message lists the kinds)
   */
  public Layer(String kind) {
    this(kind, Map.of());
  }

  /**
   * A layer of {@code kind} with attributes.
   *
   * @param kind MXNet's class name ("Conv2D", "MaxPool2D", "BatchNorm", ...)
   * @param attrs MXNet's keyword arguments by name, values as MXNet writes them
   * @throws HybridnetException.NotFound for an unknown kind (the message lists the kinds)
   * @throws HybridnetException.InvalidArgument for an unknown or malformed attribute
   */
  public Layer(String kind, Map<String, String> attrs) {
    super(create(kind, attrs));
  }
}
