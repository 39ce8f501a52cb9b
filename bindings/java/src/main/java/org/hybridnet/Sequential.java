package org.hybridnet;

import java.util.Map;

/** A stack of blocks that always runs eagerly (use {@link HybridSequential} to hybridize). */
public final class Sequential extends Block {
  /**
   * An empty container named automatically ("sequential0").
   */
  public Sequential() {
    super(create("Sequential", Map.of()));
  }

  /**
   * With a name prefix.
   *
   * @param prefix the name prefix of the container and its children
   */
  public Sequential(String prefix) {
    super(create("Sequential", attrs("prefix", prefix)));
  }

  /**
   * Appends blocks (this container closes them when it is closed); returns this.
   *
   * @param blocks the blocks to append, in order
   * @return this container
   */
  public Sequential add(Block... blocks) {
    for (Block b : blocks) addChild(b);
    return this;
  }
}
