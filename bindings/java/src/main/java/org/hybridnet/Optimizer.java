package org.hybridnet;

import java.util.LinkedHashMap;
import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * An optimizer of MXNet 1.9.1's {@code mx.optimizer} by its registered name ("sgd", "nag",
 * "adam", "adamax", "nadam", "rmsprop", "adagrad", "adadelta", "signum", "ftml", "ftrl", "lamb",
 * "lars", "dcasgd", "sgld", ...; the native registry decides which exist), with MXNet's keyword
 * arguments written as Python literals.
 *
 * <pre>{@code
 * try (Optimizer sgd = new Optimizer("sgd", Map.of("learning_rate", "0.1", "momentum", "0.9"))) {
 *   try (Trainer trainer = new Trainer(net, sgd)) { ... }
 * }
 * }</pre>
 *
 * An optimizer is used by one thread at a time.
 */
public final class Optimizer extends NativeResource {
  /**
   * The optimizer {@code name} with MXNet's defaults.
   *
   * @param name the registered name (case-insensitive)
   * @throws HybridnetException.NotFound for an unknown name (the message lists the names)
   */
  public Optimizer(String name) {
    this(name, Map.of());
  }

  /**
   * The optimizer {@code name} with keyword arguments ("learning_rate", "wd", "rescale_grad",
   * "clip_gradient", "momentum", "beta1", ...), values as Python literals ("0.9", "True",
   * "None").
   *
   * @param name the registered name (case-insensitive)
   * @param hyperParameters keyword arguments by name
   * @throws HybridnetException.NotFound for an unknown name (the message lists the names)
   * @throws HybridnetException.InvalidArgument for an unknown keyword or a bad value (the
   *     message lists the optimizer's keywords)
   */
  public Optimizer(String name, Map<String, String> hyperParameters) {
    this(create(name, hyperParameters));
  }

  Optimizer(long handle) {
    super(handle, HybridnetNative::hn_optimizer_free);
  }

  private static long create(String name, Map<String, String> hyperParameters) {
    if (name == null) throw new NullPointerException("name");
    String[][] kv = Op.attributes(hyperParameters);
    return created(
        out -> HybridnetNative.hn_optimizer_create(name, kv[0], kv[1], kv[0].length, out));
  }

  /**
   * The learning rate (the scheduler's at the current update count when one is set).
   *
   * @return the learning rate
   */
  public float learningRate() {
    float[] lr = new float[1];
    withHandle(h -> HybridnetNative.hn_optimizer_get_learning_rate(h, lr));
    return lr[0];
  }

  /**
   * Sets the learning rate.
   *
   * @param learningRate the new learning rate
   * @throws HybridnetException.InvalidArgument when a scheduler is set
   */
  public void setLearningRate(float learningRate) {
    withHandle(h -> HybridnetNative.hn_optimizer_set_learning_rate(h, learningRate));
  }

  /**
   * The factor gradients are multiplied by (MXNet's rescale_grad).
   *
   * @return rescale_grad
   */
  public float rescaleGrad() {
    float[] out = new float[1];
    withHandle(h -> HybridnetNative.hn_optimizer_get_rescale_grad(h, out));
    return out[0];
  }

  /**
   * Sets rescale_grad (the Trainer sets 1 / batch size before each step).
   *
   * @param rescaleGrad the factor
   */
  public void setRescaleGrad(float rescaleGrad) {
    withHandle(h -> HybridnetNative.hn_optimizer_set_rescale_grad(h, rescaleGrad));
  }

  /**
   * Makes {@code scheduler} set the learning rate from the update count (null removes it); its
   * base learning rate becomes this optimizer's, as in MXNet. The optimizer keeps it: the
   * scheduler object may be closed afterwards.
   *
   * @param scheduler the scheduler, or null
   */
  public void setLRScheduler(LRScheduler scheduler) {
    if (scheduler == null) {
      withHandle(h -> HybridnetNative.hn_optimizer_set_lr_scheduler(h, 0));
    } else {
      withHandle(
          h -> scheduler.withHandle(s -> HybridnetNative.hn_optimizer_set_lr_scheduler(h, s)));
    }
  }

  /**
   * The largest update count of any parameter index (MXNet's {@code num_update}).
   *
   * @return the number of updates
   */
  public int numUpdate() {
    int[] out = new int[1];
    withHandle(h -> HybridnetNative.hn_optimizer_update_count(h, 0, out, new int[1]));
    return out[0];
  }

  /**
   * The hyper-parameters with their current values, by MXNet's attribute names (values as
   * Python literals).
   *
   * @return name to value, in the library's order
   */
  public Map<String, String> hyperParameters() {
    String[] out = new String[1];
    withHandle(h -> HybridnetNative.hn_optimizer_params(h, out));
    return parseLines(out[0]);
  }

  /** "name=value" lines as a map in their order. */
  static Map<String, String> parseLines(String text) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) m.put(line.substring(0, eq), line.substring(eq + 1));
    }
    return m;
  }
}
