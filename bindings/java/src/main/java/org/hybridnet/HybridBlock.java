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

  /**
   * Turns hybridization on or off.
   *
   * @param active true to run through the cached graph, false to run eagerly again
   */
  public void hybridize(boolean active) {
    hybridize(active, false, false);
  }

  /**
   * MXNet's flags (staticShape requires staticAlloc); the executor always keeps its plan.
   *
   * @param active true to run through the cached graph, false to run eagerly again
   * @param staticAlloc MXNet's static_alloc (accepted; changes nothing)
   * @param staticShape MXNet's static_shape (accepted with staticAlloc; changes nothing)
   */
  public void hybridize(boolean active, boolean staticAlloc, boolean staticShape) {
    withHandleLocked(
        h ->
            HybridnetNative.hn_block_hybridize(
                h, active ? 1 : 0, staticAlloc ? 1 : 0, staticShape ? 1 : 0));
  }

  /**
   * Writes PREFIX-symbol.json and PREFIX-0000.params (MXNet 1.x format). Needs a traced graph:
   * hybridize and run one forward first.
   *
   * @param prefix the path prefix of the two files
   */
  public void export(String prefix) {
    export(prefix, 0);
  }

  /**
   * Writes PREFIX-symbol.json and PREFIX-EEEE.params.
   *
   * @param prefix the path prefix of the two files
   * @param epoch the EEEE of the params file name
   */
  public void export(String prefix, int epoch) {
    withHandleLocked(h -> HybridnetNative.hn_block_export(h, prefix, epoch));
  }

  /**
   * The symbolic program: the block traced with one input variable named "data".
   *
   * @return the traced graph (close it)
   */
  public Symbol trace() {
    return trace(1);
  }

  /**
   * The block traced with {@code numInputs} inputs ("data" or "data0", "data1", ...).
   *
   * @param numInputs the number of input variables
   * @return the traced graph (close it)
   */
  public Symbol trace(int numInputs) {
    return new Symbol(
        callLocked(h -> created(out -> HybridnetNative.hn_block_trace(h, numInputs, out))));
  }
}
