package org.hybridnet;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * An n-dimensional array in native memory (C-contiguous; float32 unless it came from a file or
 * an op of another dtype).
 *
 * <pre>{@code
 * try (NDArray x = NDArray.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
 *   long[] shape = x.shape();        // [2, 3]
 *   float[] values = x.toFloatArray();
 * }
 * }</pre>
 *
 * Reading one array from several threads is safe; writing ({@link #copyFrom}) needs exclusive use.
 */
public final class NDArray extends NativeResource {
  private static final int FLOAT32 = HybridnetNativeConstants.HN_DTYPE_FLOAT32;

  NDArray(long handle) {
    super(handle, HybridnetNative::hn_tensor_free);
  }

  /**
   * A float32 array of {@code shape} holding a copy of {@code data} (1-D when no shape is given).
   *
   * @param data the values, in C order; exactly the shape's size
   * @param shape the dimensions
   * @return the array (close it)
   */
  public static NDArray of(float[] data, long... shape) {
    if (data == null) throw new NullPointerException("data");
    long[] s = shape == null || shape.length == 0 ? new long[] {data.length} : shape;
    return new NDArray(created(out -> HybridnetNative.hn_tensor_create(FLOAT32, s, data, out)));
  }

  /**
   * A float32 scalar (0 dimensions).
   *
   * @param value the value
   * @return the array (close it)
   */
  public static NDArray scalar(float value) {
    return new NDArray(
        created(out -> HybridnetNative.hn_tensor_create(FLOAT32, new long[0], new float[] {value}, out)));
  }

  /**
   * A zero-filled float32 array.
   *
   * @param shape the dimensions
   * @return the array (close it)
   */
  public static NDArray zeros(long... shape) {
    return new NDArray(created(out -> HybridnetNative.hn_tensor_create(FLOAT32, shape, null, out)));
  }

  /**
   * A float32 array over the memory of a direct, native-order FloatBuffer, without copying: the
   * elements from the buffer's position to its limit, which must be exactly the shape's size.
   * Writes through either side are visible to the other. The buffer is kept reachable until the
   * last native array sharing the memory is freed.
   *
   * @param buffer a direct FloatBuffer in native byte order
   * @param shape the dimensions
   * @return the array (close it)
   */
  public static NDArray wrap(FloatBuffer buffer, long... shape) {
    FloatBuffer view = directView(buffer);
    return new NDArray(created(out -> HybridnetNative.hn_jni_tensor_wrap(shape, view, out)));
  }

  /**
   * Reads a numpy .npy file.
   *
   * @param npy the .npy file
   * @return the array (close it)
   */
  public static NDArray load(Path npy) {
    return new NDArray(created(out -> HybridnetNative.hn_tensor_load_npy(npy.toString(), out)));
  }

  /**
   * Writes this array as a numpy .npy file.
   *
   * @param npy the .npy file to write
   */
  public void save(Path npy) {
    withHandle(h -> HybridnetNative.hn_tensor_save_npy(h, npy.toString()));
  }

  /**
   * The dimensions (a new array).
   *
   * @return the dimensions
   */
  public long[] shape() {
    return call(
        h -> {
          long[][] dims = new long[1][];
          HybridnetNative.hn_tensor_shape(h, dims);
          return dims[0];
        });
  }

  /**
   * The number of dimensions.
   *
   * @return the number of dimensions
   */
  public int ndim() {
    int[] n = new int[1];
    withHandle(h -> HybridnetNative.hn_tensor_ndim(h, n));
    return n[0];
  }

  /**
   * The number of elements.
   *
   * @return the number of elements
   */
  public long size() {
    long[] n = new long[1];
    withHandle(h -> HybridnetNative.hn_tensor_size(h, n));
    return n[0];
  }

  /**
   * numpy's name of the element type ("float32", ...).
   *
   * @return the dtype's name
   */
  public String dtype() {
    return HybridnetNative.hn_dtype_name(dtypeCode());
  }

  int dtypeCode() {
    int[] d = new int[1];
    withHandle(h -> HybridnetNative.hn_tensor_dtype(h, d));
    return d[0];
  }

  /**
   * A copy of the elements as floats (other dtypes are converted).
   *
   * @return the elements, in C order
   */
  public float[] toFloatArray() {
    if (dtypeCode() != FLOAT32) {
      try (NDArray f = Op.invoke1("Cast", Map.of("dtype", "float32"), this)) {
        return f.toFloatArray();
      }
    }
    return call(
        h -> {
          long[] n = new long[1];
          HybridnetNative.hn_tensor_size(h, n);
          float[] values = new float[Math.toIntExact(n[0])];
          HybridnetNative.hn_tensor_copy_to(h, values);
          return values;
        });
  }

  /**
   * Copies the (float32) elements into {@code dst}, which must hold at least {@link #size()}.
   *
   * @param dst the destination
   */
  public void copyTo(float[] dst) {
    withHandle(h -> HybridnetNative.hn_tensor_copy_to(h, dst));
  }

  /**
   * Copies the (float32) elements into a direct FloatBuffer, from its position.
   *
   * @param dst a direct FloatBuffer in native byte order
   */
  public void copyTo(FloatBuffer dst) {
    FloatBuffer view = directView(dst);
    withHandle(h -> HybridnetNative.hn_jni_tensor_copy_to_nio(h, view));
  }

  /**
   * Overwrites the (float32) elements from {@code src}, which must hold exactly {@link #size()}.
   *
   * @param src the new values, in C order
   */
  public void copyFrom(float[] src) {
    if (src == null) throw new NullPointerException("src");
    withHandle(h -> HybridnetNative.hn_tensor_copy_from(h, src));
  }

  /**
   * Overwrites the (float32) elements from a direct FloatBuffer (position to limit).
   *
   * @param src a direct FloatBuffer in native byte order
   */
  public void copyFrom(FloatBuffer src) {
    FloatBuffer view = directView(src);
    withHandle(h -> HybridnetNative.hn_jni_tensor_copy_from_nio(h, view));
  }

  /**
   * A view with another shape of the same size (shares the elements).
   *
   * @param shape the new dimensions
   * @return the view (close it; the elements stay alive while any view is open)
   */
  public NDArray reshape(long... shape) {
    return call(h -> new NDArray(created(out -> HybridnetNative.hn_tensor_reshape(h, shape, out))));
  }

  /**
   * Marks this array as a variable whose gradient backward computes, into a new zero buffer
   * (MXNet's {@code x.attach_grad()}).
   */
  public void attachGrad() {
    attachGrad("write");
  }

  /**
   * Marks this array as a variable with MXNet's {@code grad_req}: "write" (each backward
   * overwrites the gradient), "add" (each backward adds to it) or "null" (no gradient).
   *
   * @param gradReq "write", "add" or "null"
   */
  public void attachGrad(String gradReq) {
    int[] req = {gradReqCode(gradReq)};
    withHandle(h -> HybridnetNative.hn_autograd_mark_variables(new long[] {h}, req, null));
  }

  /**
   * The gradient buffer of this variable, sharing its storage (later backwards write into it).
   *
   * @return the gradient (close it)
   * @throws IllegalStateException when this array is not a variable ({@link #attachGrad()})
   */
  public NDArray grad() {
    long g = call(h -> created(out -> HybridnetNative.hn_tensor_grad(h, out)));
    if (g == 0) {
      throw new IllegalStateException(
          "hybridnet: this NDArray has no gradient: call attachGrad() before recording");
    }
    return new NDArray(g);
  }

  /**
   * Computes the gradient of this recorded result (ones as its gradient) with respect to the
   * variables it was recorded from, and releases the recorded graph ({@link Autograd#backward}).
   */
  public void backward() {
    Autograd.backward(this);
  }

  /**
   * An array sharing this one's values but not its place in a recorded graph: gradients do not
   * flow through it (MXNet's {@code x.detach()}).
   *
   * @return the detached array (close it)
   */
  public NDArray detach() {
    return call(h -> new NDArray(created(out -> HybridnetNative.hn_tensor_detach(h, out))));
  }

  /**
   * The sum of every element, a scalar of this array's dtype (the op {@code sum}).
   *
   * @return the sum (close it)
   */
  public NDArray sum() {
    return Op.invoke1("sum", null, this);
  }

  /**
   * The value of a one-element array as a float.
   *
   * @return the only element
   * @throws IllegalStateException when the array has more or fewer elements than one
   */
  public float toFloat() {
    float[] values = toFloatArray();
    if (values.length != 1) {
      throw new IllegalStateException(
          "hybridnet: toFloat() needs one element, this array has shape "
              + shapeString(shape()));
    }
    return values[0];
  }

  /** The C API's grad_req code of MXNet's name. */
  static int gradReqCode(String gradReq) {
    if (gradReq == null) throw new NullPointerException("gradReq");
    switch (gradReq) {
      case "write":
        return HybridnetNativeConstants.HN_GRAD_WRITE;
      case "add":
        return HybridnetNativeConstants.HN_GRAD_ADD;
      case "null":
        return HybridnetNativeConstants.HN_GRAD_NULL;
      default:
        throw new IllegalArgumentException(
            "hybridnet: unknown grad_req \"" + gradReq + "\": use \"write\", \"add\" or \"null\"");
    }
  }

  /** MXNet's text form (values like numpy, then {@code <NDArray 2x3 @cpu(0)>}). */
  @Override
  public String toString() {
    if (isClosed()) return "NDArray(closed)";
    String[] out = new String[1];
    withHandle(h -> HybridnetNative.hn_tensor_to_string(h, out));
    return out[0];
  }

  /** The buffer's remaining elements as a slice (a direct buffer in native order is required). */
  static FloatBuffer directView(FloatBuffer buffer) {
    if (buffer == null) throw new NullPointerException("buffer");
    if (!buffer.isDirect()) {
      throw new IllegalArgumentException(
          "hybridnet: a direct FloatBuffer is required (ByteBuffer.allocateDirect(4 * n)"
              + ".order(ByteOrder.nativeOrder()).asFloatBuffer()); use a float[] otherwise");
    }
    if (buffer.order() != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException(
          "hybridnet: the FloatBuffer must be in native byte order (ByteOrder.nativeOrder())");
    }
    return buffer.position() == 0 && buffer.limit() == buffer.capacity() ? buffer : buffer.slice();
  }

  static NDArray[] wrapOutputs(long[] handles) {
    int n = 0;
    while (n < handles.length && handles[n] != 0) ++n;
    NDArray[] out = new NDArray[n];
    for (int i = 0; i < n; ++i) out[i] = new NDArray(handles[i]);
    return out;
  }

  static String shapeString(long[] shape) {
    return Arrays.toString(shape);
  }
}
