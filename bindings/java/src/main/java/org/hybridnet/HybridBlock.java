package org.hybridnet;

import org.hybridnet.internal.HybridnetNative;

/** A block that can be hybridized (traced into one cached graph), traced and exported. */
public abstract class HybridBlock extends Block {
  HybridBlock(long handle) {
    super(handle);
  }

  /** Turns hybridization on: the next forward traces the graph once and caches an executor. */
  public void hybridize() {
    hybridize(true, false, false);
  }

  /** Turns hybridization on or off. */
  public void hybridize(boolean active) {
    hybridize(active, false, false);
  }

  /** MXNet's flags (staticShape requires staticAlloc); the executor always keeps its plan. */
  public void hybridize(boolean active, boolean staticAlloc, boolean staticShape) {
    withHandleLocked(
        h ->
            HybridnetNative.hn_block_hybridize(
                h, active ? 1 : 0, staticAlloc ? 1 : 0, staticShape ? 1 : 0));
  }

  /**
   * Writes PREFIX-symbol.json and PREFIX-0000.params (MXNet 1.x format). Needs a traced graph:
   * hybridize and run one forward first.
   */
  public void export(String prefix) {
    export(prefix, 0);
  }

  /** Writes PREFIX-symbol.json and PREFIX-EEEE.params. */
  public void export(String prefix, int epoch) {
    withHandleLocked(h -> HybridnetNative.hn_block_export(h, prefix, epoch));
  }

  /** The symbolic program: the block traced with one input variable named "data". */
  public Symbol trace() {
    return trace(1);
  }

  /** The block traced with {@code numInputs} inputs ("data" or "data0", "data1", ...). */
  public Symbol trace(int numInputs) {
    return new Symbol(
        callLocked(h -> created(out -> HybridnetNative.hn_block_trace(h, numInputs, out))));
  }
}
