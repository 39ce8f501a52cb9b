package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NDArrayTest {
  private static FloatBuffer direct(int n) {
    return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
  }

  @Test
  void fromFloatArray() {
    float[] v = {1, 2, 3, 4, 5, 6};
    try (NDArray a = NDArray.of(v, 2, 3)) {
      assertArrayEquals(new long[] {2, 3}, a.shape());
      assertEquals(2, a.ndim());
      assertEquals(6, a.size());
      assertEquals("float32", a.dtype());
      assertArrayEquals(v, a.toFloatArray());
      v[0] = 42; // copied: the array does not see later writes
      assertEquals(1f, a.toFloatArray()[0]);
      assertTrue(a.toString().contains("<NDArray 2x3 @cpu(0)>"), a.toString());
    }
    try (NDArray a = NDArray.of(new float[] {7, 8, 9})) {
      assertArrayEquals(new long[] {3}, a.shape());
    }
  }

  @Test
  void zerosScalarReshape() {
    try (NDArray z = NDArray.zeros(2, 2)) {
      assertArrayEquals(new float[4], z.toFloatArray());
      try (NDArray r = z.reshape(4, 1)) {
        assertArrayEquals(new long[] {4, 1}, r.shape());
        r.copyFrom(new float[] {1, 2, 3, 4});
        assertArrayEquals(new float[] {1, 2, 3, 4}, z.toFloatArray(), "a reshape shares storage");
      }
    }
    try (NDArray s = NDArray.scalar(3)) {
      assertEquals(0, s.ndim());
      assertArrayEquals(new float[] {3}, s.toFloatArray());
    }
  }

  @Test
  void wrapDirectBufferIsZeroCopy() {
    FloatBuffer buf = direct(6);
    for (int i = 0; i < 6; ++i) buf.put(i, i);
    try (NDArray a = NDArray.wrap(buf, 2, 3)) {
      assertArrayEquals(new float[] {0, 1, 2, 3, 4, 5}, a.toFloatArray());
      buf.put(0, 100f); // Java writes are seen natively
      assertEquals(100f, a.toFloatArray()[0]);
      a.copyFrom(new float[] {6, 5, 4, 3, 2, 1}); // native writes are seen by Java
      assertEquals(6f, buf.get(0));
      assertEquals(1f, buf.get(5));
    }
    // From the buffer's position to its limit.
    FloatBuffer part = direct(8);
    for (int i = 0; i < 8; ++i) part.put(i, i);
    part.position(2).limit(6);
    try (NDArray a = NDArray.wrap(part, 4)) {
      assertArrayEquals(new float[] {2, 3, 4, 5}, a.toFloatArray());
    }
  }

  @Test
  void wrappedBufferStaysAliveUntilTheArrayIsFreed() throws InterruptedException {
    FloatBuffer buf = direct(1024);
    buf.put(7, 7f);
    WeakReference<FloatBuffer> ref = new WeakReference<>(buf);
    NDArray a = NDArray.wrap(buf, 1024);
    buf = null;
    for (int i = 0; i < 5; ++i) {
      System.gc();
      Thread.sleep(10);
    }
    assertEquals(7f, a.toFloatArray()[7], "the native array keeps the buffer reachable");
    a.close();
    for (int i = 0; i < 100 && ref.get() != null; ++i) {
      System.gc();
      Thread.sleep(10);
    }
    assertNull(ref.get(), "closing the array released the buffer (no global reference leak)");
  }

  @Test
  void directBufferCopies() {
    try (NDArray a = NDArray.of(new float[] {1, 2, 3})) {
      FloatBuffer out = direct(4);
      out.position(1);
      a.copyTo(out);
      assertEquals(1f, out.get(1));
      assertEquals(3f, out.get(3));
      FloatBuffer in = direct(3);
      in.put(new float[] {9, 8, 7}).flip();
      a.copyFrom(in);
      assertArrayEquals(new float[] {9, 8, 7}, a.toFloatArray());
    }
  }

  @Test
  void heapOrForeignOrderBuffersAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(FloatBuffer.allocate(4), 4));
    FloatBuffer bigEndian = ByteBuffer.allocateDirect(16).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
    if (ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN) {
      assertThrows(IllegalArgumentException.class, () -> NDArray.wrap(bigEndian, 4));
    }
    assertThrows(NullPointerException.class, () -> NDArray.wrap(null, 4));
    assertThrows(NullPointerException.class, () -> NDArray.of(null, 4));
  }

  @Test
  void npyRoundTrip(@TempDir Path dir) {
    Path file = dir.resolve("a.npy");
    float[] v = TestSupport.randomValues(3, 12);
    try (NDArray a = NDArray.of(v, 3, 4)) {
      a.save(file);
    }
    try (NDArray b = NDArray.load(file)) {
      assertArrayEquals(new long[] {3, 4}, b.shape());
      assertArrayEquals(v, b.toFloatArray());
    }
  }

  @Test
  void opsAndOtherDtypes() {
    try (NDArray a = NDArray.of(new float[] {1.5f, -2.5f, 3.25f});
        NDArray b = NDArray.of(new float[] {1, 1, 1});
        NDArray sum = Op.invoke1("elemwise_add", Map.of(), a, b);
        NDArray ints = Op.invoke1("Cast", Map.of("dtype", "int32"), a)) {
      assertArrayEquals(new float[] {2.5f, -1.5f, 4.25f}, sum.toFloatArray());
      assertEquals("int32", ints.dtype());
      assertArrayEquals(new float[] {1, -2, 3}, ints.toFloatArray(), "converted to float");
    }
    assertTrue(Op.names().contains("FullyConnected"));
    assertTrue(!Op.describe("FullyConnected").isEmpty());
  }
}
