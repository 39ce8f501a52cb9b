package org.hybridnet;

import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * A learning-rate scheduler of MXNet's {@code mx.lr_scheduler}: "factor", "multifactor", "poly"
 * or "cosine" (class names such as "FactorScheduler" too), with MXNet's keywords ("step",
 * "factor", "stop_factor_lr", "max_update", "pwr", "final_lr", "base_lr", "warmup_steps",
 * "warmup_begin_lr", "warmup_mode"). Set it on an {@link Optimizer}.
 */
public final class LRScheduler extends NativeResource {
  /**
   * The scheduler {@code name} with keyword arguments (values as Python literals).
   *
   * @param name "factor", "multifactor", "poly" or "cosine"
   * @param params keyword arguments by name
   * @throws HybridnetException.NotFound for an unknown name
   * @throws HybridnetException.InvalidArgument for a keyword or value MXNet refuses
   */
  public LRScheduler(String name, Map<String, String> params) {
    super(create(name, params), HybridnetNative::hn_lr_scheduler_free);
  }

  private static long create(String name, Map<String, String> params) {
    if (name == null) throw new NullPointerException("name");
    String[][] kv = Op.attributes(params);
    return created(
        out -> HybridnetNative.hn_lr_scheduler_create(name, kv[0], kv[1], kv[0].length, out));
  }

  /**
   * The learning rate at update count {@code numUpdate} (MXNet's {@code scheduler(num_update)});
   * the factor schedulers keep state, so counts must not decrease.
   *
   * @param numUpdate the update count
   * @return the learning rate
   */
  public float learningRate(int numUpdate) {
    float[] lr = new float[1];
    withHandle(h -> HybridnetNative.hn_lr_scheduler_get(h, numUpdate, lr));
    return lr[0];
  }

  /**
   * The attributes by MXNet's names, the first "class" (e.g. "FactorScheduler").
   *
   * @return name to value, in the library's order
   */
  public Map<String, String> params() {
    String[] out = new String[1];
    withHandle(h -> HybridnetNative.hn_lr_scheduler_params(h, out));
    return Optimizer.parseLines(out[0]);
  }
}
