package org.hybridnet;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * MXNet's {@code gluon.Trainer}: an optimizer applied to the parameters of a block tree with the
 * gradients the last backward stored.
 *
 * <pre>{@code
 * try (Trainer trainer = new Trainer(net, "adam", Map.of("learning_rate", "0.002"))) {
 *   try (Autograd.Scope s = Autograd.record()) { loss = lossFn.forward(net.forward(x), y); }
 *   loss.backward();
 *   trainer.step(batchSize);
 * }
 * }</pre>
 *
 * A trainer and its block tree are used by one thread at a time (calls take the block lock).
 */
public final class Trainer extends NativeResource {
  private final Block block;
  private final Optimizer optimizer;
  private final boolean ownsOptimizer;

  /**
   * A trainer of every parameter of {@code block} (in {@link Block#parameterNames()} order: a
   * parameter's position is its index for the optimizer and its key in .states files) with the
   * optimizer {@code name}.
   *
   * @param block the tree whose parameters are trained
   * @param optimizerName an optimizer name ({@link Optimizer})
   * @param hyperParameters its keyword arguments, values as Python literals
   */
  public Trainer(Block block, String optimizerName, Map<String, String> hyperParameters) {
    this(block, new Optimizer(optimizerName, hyperParameters), true);
  }

  /**
   * A trainer of every parameter of {@code block} sharing {@code optimizer} (which stays the
   * caller's to close).
   *
   * @param block the tree whose parameters are trained
   * @param optimizer the optimizer
   */
  public Trainer(Block block, Optimizer optimizer) {
    this(block, optimizer, false);
  }

  private Trainer(Block block, Optimizer optimizer, boolean ownsOptimizer) {
    super(create(block, optimizer, ownsOptimizer), HybridnetNative::hn_trainer_free);
    this.block = block;
    this.optimizer = optimizer;
    this.ownsOptimizer = ownsOptimizer;
  }

  private static long create(Block block, Optimizer optimizer, boolean ownsOptimizer) {
    try {
      if (block == null) throw new NullPointerException("block");
      if (optimizer == null) throw new NullPointerException("optimizer");
      List<String> names = block.parameterNames();
      String[] paramNames = names.toArray(new String[0]);
      return block.callLocked(
          b ->
              optimizer.call(
                  o -> {
                    long[] blocks = new long[paramNames.length];
                    java.util.Arrays.fill(blocks, b);
                    return created(
                        out ->
                            HybridnetNative.hn_trainer_create(
                                blocks, paramNames, paramNames.length, o, out));
                  }));
    } catch (RuntimeException e) {
      if (ownsOptimizer && optimizer != null) optimizer.close();
      throw e;
    }
  }

  /**
   * One update of every parameter whose grad_req is not "null", gradients scaled by 1 / {@code
   * batchSize} (MXNet's {@code step}).
   *
   * @param batchSize the number of samples the gradients were summed over
   * @throws HybridnetException.InvalidArgument when a parameter's gradient was not written by a
   *     backward since the last update (nothing is updated then)
   */
  public void step(int batchSize) {
    step(batchSize, false);
  }

  /**
   * {@link #step(int)}; {@code ignoreStaleGrad} skips parameters no backward wrote instead of
   * failing.
   *
   * @param batchSize the number of samples the gradients were summed over
   * @param ignoreStaleGrad whether parameters with stale gradients are skipped
   */
  public void step(int batchSize, boolean ignoreStaleGrad) {
    withTree(h -> HybridnetNative.hn_trainer_step(h, batchSize, ignoreStaleGrad ? 1 : 0));
  }

  /**
   * MXNet's {@code allreduce_grads} (one context: nothing to sum), for code split as
   * allreduceGrads + update.
   */
  public void allreduceGrads() {
    withTree(HybridnetNative::hn_trainer_allreduce_grads);
  }

  /**
   * The update half of {@link #step(int)}, for code that changes the gradients in between.
   *
   * @param batchSize the number of samples the gradients were summed over
   */
  public void update(int batchSize) {
    update(batchSize, false);
  }

  /**
   * The update half of {@link #step(int, boolean)}.
   *
   * @param batchSize the number of samples the gradients were summed over
   * @param ignoreStaleGrad whether parameters with stale gradients are skipped
   */
  public void update(int batchSize, boolean ignoreStaleGrad) {
    withTree(h -> HybridnetNative.hn_trainer_update(h, batchSize, ignoreStaleGrad ? 1 : 0));
  }

  /**
   * The optimizer's learning rate.
   *
   * @return the learning rate
   */
  public float learningRate() {
    float[] lr = new float[1];
    withHandle(h -> HybridnetNative.hn_trainer_get_learning_rate(h, lr));
    return lr[0];
  }

  /**
   * Sets the learning rate.
   *
   * @param learningRate the new learning rate
   * @throws HybridnetException.InvalidArgument when the optimizer has a scheduler
   */
  public void setLearningRate(float learningRate) {
    withHandle(h -> HybridnetNative.hn_trainer_set_learning_rate(h, learningRate));
  }

  /**
   * Writes MXNet 1.9.1's .states file (optimizer states by parameter index, and the optimizer).
   *
   * @param path the file to write
   */
  public void saveStates(Path path) {
    withTree(h -> HybridnetNative.hn_trainer_save_states(h, path.toString()));
  }

  /**
   * Reads a .states file MXNet 1.9.1 or {@link #saveStates} wrote: hyper-parameters, update
   * counts, scheduler and states (the trainer then runs the file's optimizer, a copy: the
   * {@link Optimizer} object given at construction no longer drives it).
   *
   * @param path the file to read
   * @throws HybridnetException.InvalidArgument for another optimizer's file or states that do
   *     not fit
   * @throws HybridnetException.Format for a damaged file
   */
  public void loadStates(Path path) {
    withTree(h -> HybridnetNative.hn_trainer_load_states(h, path.toString()));
  }

  /**
   * The optimizer given at construction.
   *
   * @return the optimizer
   */
  public Optimizer optimizer() {
    return optimizer;
  }

  /** Frees the trainer (and the optimizer it created from a name). Idempotent. */
  @Override
  public void close() {
    super.close();
    if (ownsOptimizer) optimizer.close();
  }

  /** A call on the trainer and its block tree, under the tree lock (one thread at a time). */
  private void withTree(java.util.function.LongConsumer body) {
    block.withHandleLocked(b -> withHandle(body));
  }
}
