package org.hybridnet;

/** An element-wise activation ("relu", "sigmoid", "tanh", "softrelu", "softsign"). */
public final class Activation extends HybridBlock {
  /**
   * An activation layer.
   *
   * @param activation "relu", "sigmoid", "tanh", "softrelu" or "softsign"
   */
  public Activation(String activation) {
    super(create("Activation", attrs("activation", activation)));
  }
}
