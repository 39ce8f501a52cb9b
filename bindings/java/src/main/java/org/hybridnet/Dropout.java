package org.hybridnet;

/** Dropout with probability {@code rate} in [0, 1] (the identity at inference). */
public final class Dropout extends HybridBlock {
  public Dropout(double rate) {
    super(create("Dropout", attrs("rate", Double.toString(rate))));
  }
}
