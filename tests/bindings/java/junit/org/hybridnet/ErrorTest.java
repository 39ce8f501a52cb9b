package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** C errors arrive as HybridnetException subclasses with the category and the C message. */
class ErrorTest {
  @Test
  void missingFiles(@TempDir Path dir) {
    String prefix = dir.resolve("nothing").toString();
    HybridnetException e =
        assertThrows(HybridnetException.IO.class, () -> Model.load(prefix, 0));
    assertEquals(Status.IO, e.status());
    assertEquals(-5, e.code());
    assertTrue(e.nativeMessage().contains(prefix + "-symbol.json"), e.getMessage());
    assertTrue(e.getMessage().startsWith("HN_ERR_IO: hn_model_load:"), e.getMessage());
    assertThrows(HybridnetException.IO.class, () -> NDArray.load(dir.resolve("x.npy")));
  }

  /** Paths and messages cross JNI as real UTF-8 (not JNI's modified UTF-8), also outside the BMP. */
  @Test
  void unicodePathsAndMessages(@TempDir Path dir) throws Exception {
    // Java itself can name such files only under a UTF-8 locale (sun.jnu.encoding).
    assumeTrue("UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding")));
    Path sub = Files.createDirectory(dir.resolve("d\u00e9j\u00e0-\uD83D\uDE00"));
    Path file = sub.resolve("x\u00fc.npy");
    try (NDArray a = NDArray.of(new float[] {1, 2, 3})) {
      a.save(file);
    }
    assertTrue(Files.exists(file), "the native library wrote the file under its UTF-8 name");
    try (NDArray b = NDArray.load(file)) {
      assertEquals(3, b.size());
    }
    HybridnetException e =
        assertThrows(HybridnetException.IO.class, () -> NDArray.load(sub.resolve("missing\u00fc.npy")));
    assertTrue(e.getMessage().contains("d\u00e9j\u00e0-\uD83D\uDE00"), e.getMessage());
  }

  @Test
  void malformedFiles(@TempDir Path dir) throws Exception {
    Path seed = TestSupport.seedPrefix();
    Path prefix = dir.resolve("bad");
    // Bad JSON with good params.
    Files.writeString(Path.of(prefix + "-symbol.json"), "{\"nodes\": [");
    Files.copy(Path.of(seed + "-0000.params"), Path.of(prefix + "-0000.params"));
    HybridnetException json = assertThrows(HybridnetException.class, () -> Model.load(prefix, 0));
    assertEquals(Status.FORMAT, json.status(), json.getMessage());
    // Good JSON with truncated params: the message names the file.
    Files.copy(Path.of(seed + "-symbol.json"), Path.of(prefix + "-symbol.json"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    byte[] params = Files.readAllBytes(Path.of(seed + "-0000.params"));
    Files.write(Path.of(prefix + "-0000.params"), Arrays.copyOf(params, params.length / 2));
    HybridnetException.Format truncated =
        assertThrows(HybridnetException.Format.class, () -> Model.load(prefix, 0));
    assertTrue(truncated.getMessage().contains("bad-0000.params"), truncated.getMessage());
    // From memory as well.
    assertThrows(HybridnetException.Format.class,
        () -> Model.fromBytes("not json", new byte[] {1, 2, 3}));
    assertThrows(HybridnetException.Format.class,
        () -> NDArray.load(Path.of(seed + "-symbol.json")));
  }

  @Test
  void badShapesAndNames() throws Exception {
    try (Model model = Model.load(TestSupport.seedPrefix(), 0);
        Predictor p = model.newPredictor()) {
      // 100 features where the first layer's weights expect 512: the op and node are named.
      HybridnetException.Shape shape =
          assertThrows(HybridnetException.Shape.class, () -> p.forward(new float[100], 1, 100));
      assertTrue(shape.getMessage().contains("FullyConnected"), shape.getMessage());
      // Data that does not match the shape.
      assertThrows(HybridnetException.InvalidArgument.class, () -> p.forward(new float[10], 1, 512));
      // An unknown input name lists the inputs.
      HybridnetException.NotFound name = assertThrows(HybridnetException.NotFound.class,
          () -> p.setInput("images", new float[512], 1, 512));
      assertTrue(name.getMessage().contains("data"), name.getMessage());
      // Too small an output buffer, an out-of-range output.
      p.forward(new float[512], 1, 512);
      assertThrows(HybridnetException.InvalidArgument.class, () -> p.getOutput(0, new float[1]));
      assertThrows(HybridnetException.InvalidArgument.class, () -> p.outputShape(5));
      // The predictor still works after errors.
      assertEquals(2, p.forward(new float[512], 1, 512).length);
    }
    try (NDArray a = NDArray.of(new float[6], 2, 3);
        NDArray b = NDArray.of(new float[4], 2, 2)) {
      assertThrows(HybridnetException.Shape.class,
          () -> Op.invoke1("elemwise_add", java.util.Map.of(), a, b));
      assertThrows(HybridnetException.Shape.class, () -> a.reshape(5));
      assertThrows(HybridnetException.InvalidArgument.class, () -> NDArray.of(new float[5], 2, 3));
    }
    assertThrows(HybridnetException.NotFound.class, () -> Op.invoke1("NoSuchOp", null));
  }

  @Test
  void badBlocks(@TempDir Path dir) {
    assertThrows(HybridnetException.InvalidArgument.class, () -> new Dense(4, "bogus"));
    assertThrows(HybridnetException.InvalidArgument.class, () -> new Dropout(2.0));
    try (HybridSequential net = new HybridSequential().add(new Dense(2))) {
      net.initialize();
      net.hybridize();
      // Export needs a traced graph: the message says what to do.
      HybridnetException e = assertThrows(HybridnetException.InvalidArgument.class,
          () -> net.export(dir.resolve("m").toString()));
      assertTrue(e.getMessage().contains("forward"), e.getMessage());
    }
  }

  @Test
  void javaSideMisuse() {
    assertThrows(NullPointerException.class, () -> Model.load((String) null, 0));
    try (Model model = Model.load(TestSupport.seedPrefixUnchecked(), 0);
        Predictor p = model.newPredictor()) {
      assertThrows(IllegalArgumentException.class,
          () -> p.setInput("data", java.nio.FloatBuffer.allocate(512), 1, 512));
      assertThrows(NullPointerException.class, () -> p.forward((float[]) null, 1, 512));
    }
  }
}
