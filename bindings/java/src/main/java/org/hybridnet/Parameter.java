package org.hybridnet;

import org.hybridnet.internal.HybridnetNative;

/**
 * A parameter of a block tree, by its full name ("hybridsequential0_dense0_weight"): its value,
 * its gradient buffer and MXNet's training attributes (grad_req, lr_mult, wd_mult).
 *
 * <p>It holds no native handle of its own: every call goes through the block it came from, so
 * after that block is closed every call throws {@link IllegalStateException}.
 */
public final class Parameter {
  private final Block block;
  private final String name;

  Parameter(Block block, String name) {
    this.block = block;
    this.name = name;
  }

  /**
   * The full name.
   *
   * @return the name, e.g. "hybridsequential0_dense0_weight"
   */
  public String name() {
    return name;
  }

  /**
   * The value, sharing the parameter's storage (writing it changes the weight).
   *
   * @return the value (close it)
   */
  public NDArray data() {
    return new NDArray(
        block.callLocked(
            h -> NativeResource.created(out -> HybridnetNative.hn_block_param_data(h, name, out))));
  }

  /**
   * The gradient buffer (MXNet's {@code param.grad()}), sharing its storage: zeros until a
   * backward writes it.
   *
   * @return the gradient (close it)
   * @throws HybridnetException.InvalidArgument when grad_req is "null" or the parameter has no
   *     value yet
   */
  public NDArray grad() {
    return new NDArray(
        block.callLocked(
            h -> NativeResource.created(out -> HybridnetNative.hn_block_param_grad(h, name, out))));
  }

  /** Zeroes the gradient buffer (MXNet's {@code zero_grad}). */
  public void zeroGrad() {
    block.withHandleLocked(h -> HybridnetNative.hn_block_param_zero_grad(h, name));
  }

  /**
   * MXNet's grad_req.
   *
   * @return "write", "add" or "null"
   */
  public String gradReq() {
    return attribute("grad_req");
  }

  /**
   * Sets grad_req: "write", "add" or "null" ("null" drops the gradient buffer).
   *
   * @param gradReq "write", "add" or "null"
   */
  public void setGradReq(String gradReq) {
    setAttribute("grad_req", gradReq);
  }

  /**
   * The factor the Trainer scales this parameter's learning rate by.
   *
   * @return lr_mult
   */
  public double lrMult() {
    return Double.parseDouble(attribute("lr_mult"));
  }

  /**
   * Sets the factor the Trainer scales this parameter's learning rate by.
   *
   * @param lrMult the factor
   */
  public void setLrMult(double lrMult) {
    setAttribute("lr_mult", Double.toString(lrMult));
  }

  /**
   * The factor the Trainer scales this parameter's weight decay by.
   *
   * @return wd_mult
   */
  public double wdMult() {
    return Double.parseDouble(attribute("wd_mult"));
  }

  /**
   * Sets the factor the Trainer scales this parameter's weight decay by.
   *
   * @param wdMult the factor
   */
  public void setWdMult(double wdMult) {
    setAttribute("wd_mult", Double.toString(wdMult));
  }

  private String attribute(String key) {
    String[] out = new String[1];
    block.withHandleLocked(h -> HybridnetNative.hn_block_param_get_attr(h, name, key, out));
    return out[0];
  }

  private void setAttribute(String key, String value) {
    if (value == null) throw new NullPointerException(key);
    block.withHandleLocked(h -> HybridnetNative.hn_block_param_set_attr(h, name, key, value));
  }

  @Override
  public String toString() {
    return "Parameter(" + name + ")";
  }
}
