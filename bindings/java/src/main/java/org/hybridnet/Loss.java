package org.hybridnet;

import java.util.Map;

/**
 * A loss of MXNet's {@code gluon.loss} by its class name ("SoftmaxCrossEntropyLoss", "L2Loss",
 * "L1Loss", "SigmoidBinaryCrossEntropyLoss", "KLDivLoss", "CTCLoss", "HuberLoss", "HingeLoss",
 * ...; the native library's block kinds decide which exist). Its forward takes the inputs in
 * MXNet's order (prediction, label, optional sample weight) and returns the per-sample loss.
 *
 * <pre>{@code
 * try (Loss loss = new Loss("SoftmaxCrossEntropyLoss");
 *     Autograd.Scope s = Autograd.record()) {
 *   l = loss.forward(net.forward(x), y);
 * }
 * }</pre>
 */
public final class Loss extends HybridBlock {
  /**
   * A loss of {@code kind} with MXNet's defaults.
   *
   * @param kind MXNet's class name
   * @throws HybridnetException.NotFound for an unknown kind (the message lists the kinds)
   */
  public Loss(String kind) {
    this(kind, Map.of());
  }

  /**
   * A loss of {@code kind} with MXNet's keyword arguments ("weight", "batch_axis", "axis",
   * "sparse_label", "from_logits", ...) as strings.
   *
   * @param kind MXNet's class name
   * @param attrs keyword arguments by name, values as MXNet writes them
   * @throws HybridnetException.NotFound for an unknown kind (the message lists the kinds)
   * @throws HybridnetException.InvalidArgument for an unknown or malformed attribute
   */
  public Loss(String kind, Map<String, String> attrs) {
    super(create(kind, attrs));
  }
}
