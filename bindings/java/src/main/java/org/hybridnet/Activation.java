package org.hybridnet;

/** An element-wise activation ("relu", "sigmoid", "tanh", "softrelu", "softsign"). */
public final class Activation extends HybridBlock {
  public Activation(String activation) {
    super(create("Activation", attrs("activation", activation)));
  }
}
