package org.hybridnet;

import java.nio.FloatBuffer;
import java.util.List;
import java.util.Objects;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * Runs a {@link Model}. Input shapes are given on every call (a new shape, e.g. another batch
 * size, re-plans transparently). Create one predictor per thread, or {@link #clone()} one: they
 * share the model's weights. Calls on one predictor are serialized (synchronized), and a {@link
 * #close()} racing a call on another thread is safe.
 *
 * <pre>{@code
 * float[] out = new float[2];
 * p.forward(x, new long[] {1, 512}, out);   // no allocation per call
 * }</pre>
 */
public final class Predictor extends NativeResource {
  private static final int FLOAT32 = HybridnetNativeConstants.HN_DTYPE_FLOAT32;

  private final List<String> inputNames;
  private final List<String> outputNames;
  private final String firstInput;

  Predictor(long handle, List<String> inputNames, List<String> outputNames) {
    super(handle, HybridnetNative::hn_predictor_free);
    this.inputNames = inputNames;
    this.outputNames = outputNames;
    this.firstInput = inputNames.isEmpty() ? null : inputNames.get(0);
  }

  /**
   * A predictor of {@code model} (same as {@link Model#newPredictor()}).
   *
   * @param model the model to run
   * @return the predictor (close it)
   */
  public static Predictor of(Model model) {
    return model.newPredictor();
  }

  /**
   * The model's data inputs.
   *
   * @return the input names
   */
  public List<String> inputNames() {
    return inputNames;
  }

  /**
   * The model's outputs.
   *
   * @return the output names
   */
  public List<String> outputNames() {
    return outputNames;
  }

  /**
   * A new predictor of the same model sharing its weights (inputs and plans are not copied). May
   * run while another thread uses this predictor.
   */
  @Override
  public Predictor clone() {
    return new Predictor(
        call(h -> created(out -> HybridnetNative.hn_predictor_clone(h, out))),
        inputNames,
        outputNames);
  }

  /**
   * Sets input {@code name} from a copy of {@code data} with {@code shape}.
   *
   * @param name the input's name
   * @param data the values, in C order; exactly the shape's size
   * @param shape the dimensions
   */
  public synchronized void setInput(String name, float[] data, long... shape) {
    Objects.requireNonNull(data, "data");
    withHandle(h -> HybridnetNative.hn_predictor_set_input(h, name, FLOAT32, shape, data));
  }

  /**
   * Sets input {@code name} from a direct FloatBuffer (position to limit; read, not kept).
   *
   * @param name the input's name
   * @param data a direct FloatBuffer in native byte order
   * @param shape the dimensions
   */
  public synchronized void setInput(String name, FloatBuffer data, long... shape) {
    FloatBuffer view = NDArray.directView(data);
    withHandle(h -> HybridnetNative.hn_jni_predictor_set_input_nio(h, name, shape, view));
  }

  /**
   * Sets input {@code name} to {@code tensor} without copying: the predictor shares its storage
   * until the input is set again (do not write it during a forward). The NDArray may be closed.
   *
   * @param name the input's name
   * @param tensor the array to feed
   */
  public synchronized void setInput(String name, NDArray tensor) {
    withHandle(
        h -> tensor.withHandle(t -> HybridnetNative.hn_predictor_set_input_tensor(h, name, t)));
  }

  /** Runs the model on the inputs set (unset inputs are fed zeros of their inferred shape). */
  public synchronized void forward() {
    withHandle(HybridnetNative::hn_predictor_forward);
  }

  /**
   * The number of outputs.
   *
   * @return the output count
   */
  public int numOutputs() {
    return outputNames.size();
  }

  /**
   * The shape of output {@code index} of the last forward.
   *
   * @param index the output's position
   * @return its dimensions
   */
  public synchronized long[] outputShape(int index) {
    long[][] dims = new long[1][];
    withHandle(h -> HybridnetNative.hn_predictor_output_shape(h, index, dims));
    return dims[0];
  }

  /**
   * Copies output {@code index} of the last forward into {@code dst} (at least its size).
   *
   * @param index the output's position
   * @param dst the destination
   */
  public synchronized void getOutput(int index, float[] dst) {
    withHandle(h -> HybridnetNative.hn_predictor_get_output(h, index, dst));
  }

  /**
   * Copies output {@code index} into a direct FloatBuffer, from its position.
   *
   * @param index the output's position
   * @param dst a direct FloatBuffer in native byte order
   */
  public synchronized void getOutput(int index, FloatBuffer dst) {
    FloatBuffer view = NDArray.directView(dst);
    withHandle(h -> HybridnetNative.hn_jni_predictor_get_output_nio(h, index, view));
  }

  /**
   * Output {@code index} of the last forward as an NDArray (keeps its values; close it).
   *
   * @param index the output's position
   * @return the output (close it)
   */
  public synchronized NDArray output(int index) {
    return new NDArray(call(h -> created(out -> HybridnetNative.hn_predictor_output(h, index, out))));
  }

  /**
   * One call for single-input models: sets the first input, runs, and returns the first output.
   *
   * @param input the first input's values, in C order
   * @param shape its dimensions
   * @return the first output's values
   */
  public synchronized float[] forward(float[] input, long... shape) {
    Objects.requireNonNull(input, "input");
    String name = firstInput();
    return call(
        h -> {
          HybridnetNative.hn_predictor_set_input(h, name, FLOAT32, shape, input);
          HybridnetNative.hn_predictor_forward(h);
          long[][] dims = new long[1][];
          HybridnetNative.hn_predictor_output_shape(h, 0, dims);
          long n = 1;
          for (long d : dims[0]) n *= d;
          float[] out = new float[Math.toIntExact(n)];
          HybridnetNative.hn_predictor_get_output(h, 0, out);
          return out;
        });
  }

  /**
   * The allocation-free form: sets the first input, runs, and copies the first output into
   * {@code output} (which must hold at least its size).
   *
   * @param input the first input's values, in C order
   * @param shape its dimensions
   * @param output receives the first output's values
   */
  public synchronized void forward(float[] input, long[] shape, float[] output) {
    Objects.requireNonNull(input, "input");
    String name = firstInput();
    withHandle(
        h -> {
          HybridnetNative.hn_predictor_set_input(h, name, FLOAT32, shape, input);
          HybridnetNative.hn_predictor_forward(h);
          HybridnetNative.hn_predictor_get_output(h, 0, output);
        });
  }

  /**
   * Runs on NDArrays (inputs in {@link #inputNames()} order, shared not copied); first output.
   *
   * @param inputs the inputs, in input order
   * @return the first output (close it)
   */
  public NDArray forward(NDArray... inputs) {
    NDArray[] out = run(inputs);
    for (int i = 1; i < out.length; ++i) out[i].close();
    return out[0];
  }

  /**
   * Runs on NDArrays and returns every output (close each).
   *
   * @param inputs the inputs, in input order
   * @return every output, in order
   */
  public synchronized NDArray[] run(NDArray... inputs) {
    long[] outputs = new long[Math.max(1, outputNames.size())];
    withHandle(
        h -> callAll(inputs, handles -> HybridnetNative.hn_predictor_run(h, handles, outputs)));
    return NDArray.wrapOutputs(outputs);
  }

  private String firstInput() {
    if (firstInput == null) {
      throw new IllegalStateException("hybridnet: the model has no data input");
    }
    return firstInput;
  }

  @Override
  public String toString() {
    return "Predictor(inputs=" + inputNames + ", outputs=" + outputNames + (isClosed() ? ", closed)" : ")");
  }
}
