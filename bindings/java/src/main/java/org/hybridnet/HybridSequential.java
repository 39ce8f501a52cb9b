package org.hybridnet;

import java.util.Map;

/**
 * A hybridizable stack of hybrid blocks.
 *
 * <pre>{@code
 * try (HybridSequential net = new HybridSequential()
 *          .add(new Dense(256, "relu"), new Dense(128, "relu"), new Dense(2))) {
 *   net.initialize();
 *   net.hybridize();
 *   try (NDArray y = net.forward(x)) { ... }
 * }
 * }</pre>
 */
public final class HybridSequential extends HybridBlock {
  /**
   * An empty container named automatically ("hybridsequential0").
   */
  public HybridSequential() {
    super(create("HybridSequential", Map.of()));
  }

  /**
   * With a name prefix, e.g. "net_".
   *
   * @param prefix the name prefix of the container and its children
   */
  public HybridSequential(String prefix) {
    super(create("HybridSequential", attrs("prefix", prefix)));
  }

  /**
   * Appends blocks (this container closes them when it is closed); returns this.
   *
   * @param blocks the blocks to append, in order
   * @return this container
   */
  public HybridSequential add(HybridBlock... blocks) {
    for (HybridBlock b : blocks) addChild(b);
    return this;
  }
}
