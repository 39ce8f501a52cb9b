package org.hybridnet;

import java.util.LinkedHashMap;
import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * An evaluation metric of MXNet's {@code mx.metric}, by a registry name or alias ("acc",
 * "top_k_acc", "f1", "mcc", "mae", "mse", "rmse", "ce", "nll_loss", "perplexity", "pearsonr",
 * "loss", "composite"; the native registry decides which exist) with MXNet's arguments.
 *
 * <pre>{@code
 * try (Metric acc = new Metric("acc")) {
 *   acc.update(labels, predictions);     // one call per batch
 *   double accuracy = acc.value();
 * }
 * }</pre>
 *
 * It keeps local statistics ({@link #resetLocal()}) and global ones ({@link #reset()}), as
 * MXNet's EvalMetric; a metric without instances reads NaN.
 */
public final class Metric extends NativeResource {
  /**
   * The metric {@code name} with MXNet's defaults.
   *
   * @param name a registry name or alias (case-insensitive)
   * @throws HybridnetException.NotFound for an unknown name (the message lists the names)
   */
  public Metric(String name) {
    this(name, Map.of());
  }

  /**
   * The metric {@code name} with keyword arguments as MXNet's text ("axis", "top_k", "average",
   * "eps", "ignore_label", "name"; "metrics" for "composite": comma-separated names).
   *
   * @param name a registry name or alias (case-insensitive)
   * @param args keyword arguments by name
   * @throws HybridnetException.NotFound for an unknown name (the message lists the names)
   * @throws HybridnetException.InvalidArgument for an unknown or bad argument
   */
  public Metric(String name, Map<String, String> args) {
    super(create(name, args), HybridnetNative::hn_metric_free);
  }

  private static long create(String name, Map<String, String> args) {
    if (name == null) throw new NullPointerException("name");
    String[][] kv = Op.attributes(args);
    return created(out -> HybridnetNative.hn_metric_create(name, kv[0], kv[1], kv[0].length, out));
  }

  /**
   * Adds one batch.
   *
   * @param label the labels of {@code pred}
   * @param pred the predictions
   * @throws HybridnetException.Shape when their shapes do not fit
   */
  public void update(NDArray label, NDArray pred) {
    update(new NDArray[] {label}, new NDArray[] {pred});
  }

  /**
   * Adds one batch of several outputs: {@code labels[i]} are the labels of {@code preds[i]}.
   *
   * @param labels the labels, one per prediction ("loss" reads none: an empty array)
   * @param preds the predictions
   */
  public void update(NDArray[] labels, NDArray[] preds) {
    if (labels == null) throw new NullPointerException("labels");
    if (preds == null) throw new NullPointerException("preds");
    withHandle(
        h ->
            callAll(
                labels,
                l -> callAll(preds, p -> HybridnetNative.hn_metric_update(h, l, p))));
  }

  /**
   * The readings (MXNet's {@code get()}): one for a plain metric, every child's for a composite.
   *
   * @return reading name ("accuracy", ...) to value, in order
   */
  public Map<String, Double> get() {
    return readings(false);
  }

  /**
   * The readings over everything since the last {@link #reset()} (MXNet's {@code get_global()}).
   *
   * @return reading name to value, in order
   */
  public Map<String, Double> getGlobal() {
    return readings(true);
  }

  /**
   * The first reading's value (a plain metric's only one).
   *
   * @return the value (NaN without instances)
   */
  public double value() {
    return call(
        h -> {
          double[] value = new double[1];
          HybridnetNative.hn_jni_metric_reading(h, 0, 0, null, value, new long[1]);
          return value[0];
        });
  }

  /** Clears every statistic (MXNet's {@code reset()}). */
  public void reset() {
    withHandle(h -> HybridnetNative.hn_metric_reset(h, 0));
  }

  /** Clears the local statistics only (MXNet's {@code reset_local()}). */
  public void resetLocal() {
    withHandle(h -> HybridnetNative.hn_metric_reset(h, 1));
  }

  /**
   * MXNet's class name of the metric ("Accuracy", "CompositeEvalMetric", ...).
   *
   * @return the class name
   */
  public String kind() {
    String[] out = new String[1];
    withHandle(h -> HybridnetNative.hn_metric_kind(h, out));
    return out[0];
  }

  private Map<String, Double> readings(boolean global) {
    int g = global ? 1 : 0;
    return call(
        h -> {
          Map<String, Double> m = new LinkedHashMap<>();
          long[] count = {1};
          String[] name = new String[1];
          double[] value = new double[1];
          for (long i = 0; i < count[0]; ++i) {
            HybridnetNative.hn_jni_metric_reading(h, g, i, name, value, count);
            if (i < count[0]) m.put(name[0], value[0]);
          }
          return m;
        });
  }
}
