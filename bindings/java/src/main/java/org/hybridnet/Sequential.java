package org.hybridnet;

import java.util.Map;

/** A stack of blocks that always runs eagerly (use {@link HybridSequential} to hybridize). */
public final class Sequential extends Block {
  public Sequential() {
    super(create("Sequential", Map.of()));
  }

  /** With a name prefix. */
  public Sequential(String prefix) {
    super(create("Sequential", attrs("prefix", prefix)));
  }

  /** Appends blocks (this container closes them when it is closed); returns this. */
  public Sequential add(Block... blocks) {
    for (Block b : blocks) addChild(b);
    return this;
  }
}
