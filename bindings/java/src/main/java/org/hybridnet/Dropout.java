package org.hybridnet;

/** Dropout with probability {@code rate} in [0, 1] (the identity at inference). */
public final class Dropout extends HybridBlock {
  /**
   * A dropout layer.
   *
   * @param rate the probability of dropping an element in training, in [0, 1]
   */
  public Dropout(double rate) {
    super(create("Dropout", attrs("rate", Double.toString(rate))));
  }
}
