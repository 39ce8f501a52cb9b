package org.hybridnet;

import java.util.Map;

/** Flattens every dimension after the first: (N, d1, d2, ...) -> (N, d1 * d2 * ...). */
public final class Flatten extends HybridBlock {
  /**
   * A flatten layer.
   */
  public Flatten() {
    super(create("Flatten", Map.of()));
  }
}
