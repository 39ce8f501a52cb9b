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
    super(handle, Kind.PREDICTOR);
    this.inputNames = inputNames;
    this.outputNames = outputNames;
    this.firstInput = inputNames.isEmpty() ? null : inputNames.get(0);
  }

  /** A predictor of {@code model} (same as {@link Model#newPredictor()}). */
  public static Predictor of(Model model) {
    return model.newPredictor();
  }

  /** The model's data inputs. */
  public List<String> inputNames() {
    return inputNames;
  }

  /** The model's outputs. */
  public List<String> outputNames() {
    return outputNames;
  }

  /**
   * A new predictor of the same model sharing its weights (inputs and plans are not copied). May
   * run while another thread uses this predictor.
   */
  @Override
  public Predictor clone() {
    long h = acquire();
    try {
      long[] out = new long[1];
      HybridnetNative.hn_predictor_clone(h, out);
      return new Predictor(out[0], inputNames, outputNames);
    } finally {
      release();
    }
  }

  /** Sets input {@code name} from a copy of {@code data} with {@code shape}. */
  public synchronized void setInput(String name, float[] data, long... shape) {
    Objects.requireNonNull(data, "data");
    long h = acquire();
    try {
      HybridnetNative.hn_predictor_set_input(h, name, FLOAT32, shape, data);
    } finally {
      release();
    }
  }

  /** Sets input {@code name} from a direct FloatBuffer (position to limit; read, not kept). */
  public synchronized void setInput(String name, FloatBuffer data, long... shape) {
    FloatBuffer view = NDArray.directView(data);
    long h = acquire();
    try {
      HybridnetNative.hn_jni_predictor_set_input_nio(h, name, shape, view);
    } finally {
      release();
    }
  }

  /**
   * Sets input {@code name} to {@code tensor} without copying: the predictor shares its storage
   * until the input is set again (do not write it during a forward). The NDArray may be closed.
   */
  public synchronized void setInput(String name, NDArray tensor) {
    long h = acquire();
    try {
      long t = tensor.acquire();
      try {
        HybridnetNative.hn_predictor_set_input_tensor(h, name, t);
      } finally {
        tensor.release();
      }
    } finally {
      release();
    }
  }

  /** Runs the model on the inputs set (unset inputs are fed zeros of their inferred shape). */
  public synchronized void forward() {
    long h = acquire();
    try {
      HybridnetNative.hn_predictor_forward(h);
    } finally {
      release();
    }
  }

  /** The number of outputs. */
  public int numOutputs() {
    return outputNames.size();
  }

  /** The shape of output {@code index} of the last forward. */
  public synchronized long[] outputShape(int index) {
    long h = acquire();
    try {
      long[][] dims = new long[1][];
      HybridnetNative.hn_predictor_output_shape(h, index, dims);
      return dims[0];
    } finally {
      release();
    }
  }

  /** Copies output {@code index} of the last forward into {@code dst} (at least its size). */
  public synchronized void getOutput(int index, float[] dst) {
    long h = acquire();
    try {
      HybridnetNative.hn_predictor_get_output(h, index, dst);
    } finally {
      release();
    }
  }

  /** Copies output {@code index} into a direct FloatBuffer, from its position. */
  public synchronized void getOutput(int index, FloatBuffer dst) {
    FloatBuffer view = NDArray.directView(dst);
    long h = acquire();
    try {
      HybridnetNative.hn_jni_predictor_get_output_nio(h, index, view);
    } finally {
      release();
    }
  }

  /** Output {@code index} of the last forward as an NDArray (keeps its values; close it). */
  public synchronized NDArray output(int index) {
    long h = acquire();
    try {
      long[] out = new long[1];
      HybridnetNative.hn_predictor_output(h, index, out);
      return new NDArray(out[0]);
    } finally {
      release();
    }
  }

  /**
   * One call for single-input models: sets the first input, runs, and returns the first output.
   */
  public synchronized float[] forward(float[] input, long... shape) {
    Objects.requireNonNull(input, "input");
    long h = acquire();
    try {
      HybridnetNative.hn_predictor_set_input(h, firstInput(), FLOAT32, shape, input);
      HybridnetNative.hn_predictor_forward(h);
      long[][] dims = new long[1][];
      HybridnetNative.hn_predictor_output_shape(h, 0, dims);
      long n = 1;
      for (long d : dims[0]) n *= d;
      float[] out = new float[Math.toIntExact(n)];
      HybridnetNative.hn_predictor_get_output(h, 0, out);
      return out;
    } finally {
      release();
    }
  }

  /**
   * The allocation-free form: sets the first input, runs, and copies the first output into
   * {@code output} (which must hold at least its size).
   */
  public synchronized void forward(float[] input, long[] shape, float[] output) {
    Objects.requireNonNull(input, "input");
    long h = acquire();
    try {
      HybridnetNative.hn_predictor_set_input(h, firstInput(), FLOAT32, shape, input);
      HybridnetNative.hn_predictor_forward(h);
      HybridnetNative.hn_predictor_get_output(h, 0, output);
    } finally {
      release();
    }
  }

  /** Runs on NDArrays (inputs in {@link #inputNames()} order, shared not copied); first output. */
  public NDArray forward(NDArray... inputs) {
    NDArray[] out = run(inputs);
    for (int i = 1; i < out.length; ++i) out[i].close();
    return out[0];
  }

  /** Runs on NDArrays and returns every output (close each). */
  public synchronized NDArray[] run(NDArray... inputs) {
    long h = acquire();
    try {
      long[] handles = acquireAll(inputs);
      try {
        long[] outputs = new long[Math.max(1, outputNames.size())];
        HybridnetNative.hn_predictor_run(h, handles, outputs);
        return NDArray.wrapOutputs(outputs);
      } finally {
        releaseAll(inputs, inputs.length);
      }
    } finally {
      release();
    }
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
