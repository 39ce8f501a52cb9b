package org.hybridnet;

import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * Gradients of eager computations, as MXNet's {@code mx.autograd}: record the forward in a scope,
 * then run {@link #backward} (or {@link NDArray#backward()}) on its result.
 *
 * <pre>{@code
 * x.attachGrad();
 * try (Autograd.Scope s = Autograd.record()) {
 *   y = Op.invoke1("exp", null, x);
 * }
 * y.backward();
 * try (NDArray dx = x.grad()) { ... }     // exp(x)
 * }</pre>
 *
 * Recording and training are flags of the calling thread: a scope changes them on the thread
 * that opened it and restores the previous values when closed, on the same thread.
 */
public final class Autograd {
  private static final int KEEP = -1;

  static {
    org.hybridnet.internal.NativeLoader.load();
  }

  private Autograd() {}

  /**
   * Starts recording in training mode (MXNet's {@code autograd.record()}).
   *
   * @return the scope (close it to stop recording)
   */
  public static Scope record() {
    return new Scope(1, 1);
  }

  /**
   * Starts recording; {@code trainMode} false records in predict mode (Dropout keeps every value,
   * BatchNorm uses its running statistics).
   *
   * @param trainMode whether the recorded ops run in training mode
   * @return the scope (close it to stop recording)
   */
  public static Scope record(boolean trainMode) {
    return new Scope(1, trainMode ? 1 : 0);
  }

  /**
   * Stops recording (and training) inside a recording scope (MXNet's {@code autograd.pause()}).
   *
   * @return the scope (close it to resume)
   */
  public static Scope pause() {
    return new Scope(0, 0);
  }

  /**
   * Stops recording; {@code trainMode} says whether ops run in training mode meanwhile.
   *
   * @param trainMode whether the ops run in training mode while paused
   * @return the scope (close it to resume)
   */
  public static Scope pause(boolean trainMode) {
    return new Scope(0, trainMode ? 1 : 0);
  }

  /**
   * Runs ops in training mode without changing recording (MXNet's {@code autograd.train_mode()}).
   *
   * @return the scope (close it to restore the previous mode)
   */
  public static Scope trainMode() {
    return new Scope(KEEP, 1);
  }

  /**
   * Runs ops in predict mode without changing recording (MXNet's {@code
   * autograd.predict_mode()}).
   *
   * @return the scope (close it to restore the previous mode)
   */
  public static Scope predictMode() {
    return new Scope(KEEP, 0);
  }

  /**
   * Whether the calling thread records eager ops.
   *
   * @return true inside a recording scope
   */
  public static boolean isRecording() {
    int[] out = new int[1];
    HybridnetNative.hn_autograd_is_recording(out);
    return out[0] != 0;
  }

  /**
   * Whether eager ops on the calling thread run in training mode.
   *
   * @return true in training mode
   */
  public static boolean isTraining() {
    int[] out = new int[1];
    HybridnetNative.hn_autograd_is_training(out);
    return out[0] != 0;
  }

  /**
   * Computes the gradients of {@code heads} (ones as head gradients) into the gradient buffers
   * of the variables they were recorded from, and releases the recorded graph.
   *
   * @param heads recorded results
   * @throws HybridnetException.InvalidArgument when a head was not recorded, or no variable
   *     wants a gradient
   */
  public static void backward(NDArray... heads) {
    backward(heads, null, false, true);
  }

  /**
   * MXNet's {@code autograd.backward(heads, head_grads, retain_graph, train_mode)}.
   *
   * @param heads recorded results
   * @param headGrads one gradient per head (its shape and dtype), or null for ones
   * @param retainGraph whether the graph is kept for another backward
   * @param trainMode whether the gradient ops run in training mode
   */
  public static void backward(
      NDArray[] heads, NDArray[] headGrads, boolean retainGraph, boolean trainMode) {
    checkHeadGrads(heads, headGrads);
    NativeResource.callAll(
        heads,
        h ->
            headGrads == null
                ? HybridnetNative.hn_autograd_backward(
                    h, null, retainGraph ? 1 : 0, trainMode ? 1 : 0)
                : NativeResource.callAll(
                    headGrads,
                    g ->
                        HybridnetNative.hn_autograd_backward(
                            h, g, retainGraph ? 1 : 0, trainMode ? 1 : 0)));
  }

  /**
   * The gradients of {@code heads} with respect to {@code variables}, as new arrays; the
   * variables' gradient buffers are left as they are (MXNet's {@code autograd.grad}).
   *
   * @param heads recorded results
   * @param variables marked variables the heads were recorded from
   * @return one gradient per variable (close each)
   */
  public static NDArray[] grad(NDArray[] heads, NDArray[] variables) {
    return grad(heads, variables, null, false, false, true);
  }

  /**
   * MXNet's {@code autograd.grad(heads, variables, head_grads, retain_graph, create_graph,
   * train_mode)}; with {@code createGraph} the gradients are recorded too (second order).
   *
   * @param heads recorded results
   * @param variables marked variables the heads were recorded from
   * @param headGrads one gradient per head, or null for ones
   * @param retainGraph whether the graph is kept for another backward
   * @param createGraph whether the gradient ops are recorded
   * @param trainMode whether the gradient ops run in training mode
   * @return one gradient per variable (close each)
   */
  public static NDArray[] grad(
      NDArray[] heads,
      NDArray[] variables,
      NDArray[] headGrads,
      boolean retainGraph,
      boolean createGraph,
      boolean trainMode) {
    checkHeadGrads(heads, headGrads);
    if (variables == null) throw new NullPointerException("variables");
    long[] grads = new long[variables.length];
    NativeResource.callAll(
        heads,
        h ->
            NativeResource.callAll(
                variables,
                v ->
                    headGrads == null
                        ? runGrad(h, null, v, retainGraph, createGraph, trainMode, grads)
                        : NativeResource.callAll(
                            headGrads,
                            g -> runGrad(h, g, v, retainGraph, createGraph, trainMode, grads))));
    NDArray[] out = new NDArray[grads.length];
    for (int i = 0; i < grads.length; ++i) out[i] = new NDArray(grads[i]);
    return out;
  }

  private static int runGrad(
      long[] heads,
      long[] headGrads,
      long[] variables,
      boolean retainGraph,
      boolean createGraph,
      boolean trainMode,
      long[] out) {
    return HybridnetNative.hn_autograd_grad_v2(
        heads,
        headGrads,
        variables,
        retainGraph ? 1 : 0,
        trainMode ? 1 : 0,
        createGraph ? 1 : 0,
        out);
  }

  private static void checkHeadGrads(NDArray[] heads, NDArray[] headGrads) {
    if (heads == null) throw new NullPointerException("heads");
    if (headGrads != null && headGrads.length != heads.length) {
      throw new IllegalArgumentException(
          "hybridnet: "
              + headGrads.length
              + " head gradients for "
              + heads.length
              + " heads: give one per head, or null for ones");
    }
  }

  /**
   * A change of the calling thread's recording and training flags, undone by {@link #close()}.
   */
  public static final class Scope implements AutoCloseable {
    private final Thread owner = Thread.currentThread();
    private final int flags;
    private final int mask;
    private final int previous;
    private boolean closed;

    private Scope(int recording, int training) {
      int recordingBit = HybridnetNativeConstants.HN_AUTOGRAD_RECORDING;
      int trainingBit = HybridnetNativeConstants.HN_AUTOGRAD_TRAINING;
      flags = (recording == 1 ? recordingBit : 0) | (training == 1 ? trainingBit : 0);
      mask = (recording == KEEP ? 0 : recordingBit) | trainingBit;
      int[] before = new int[1];
      HybridnetNative.hn_autograd_set_flags(flags, mask, before);
      previous = before[0];
    }

    /**
     * Restores the flags this scope changed as they were when it was opened. Idempotent.
     *
     * @throws IllegalStateException on another thread than the one that opened the scope
     */
    @Override
    public void close() {
      if (closed) return;
      if (Thread.currentThread() != owner) {
        throw new IllegalStateException(
            "hybridnet: an autograd scope must be closed on the thread that opened it ("
                + owner.getName()
                + "): recording is a flag of each thread");
      }
      closed = true;
      int changed = (previous ^ flags) & mask;
      if (changed != 0) HybridnetNative.hn_autograd_set_flags(previous, changed, null);
    }
  }
}
