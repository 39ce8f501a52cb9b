package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model.exportOnnx writes the very file `hybridnet convert` does (which tests/onnx checks in ONNX
 * Runtime), and reports bad arguments as exceptions.
 */
class OnnxExportTest {
  @Test
  void exportIsTheCommandLinesByteForByte(@TempDir Path dir) throws Exception {
    Path prefix = TestSupport.seedPrefix();
    Path fromJava = dir.resolve("java.onnx");
    Path fromCli = dir.resolve("cli.onnx");
    try (Model model = Model.load(prefix, 0)) {
      model.exportOnnx(fromJava, Map.of("data", new long[] {2, 512}), 13, true);
    }
    TestSupport.run(TestSupport.binDir().resolve("hybridnet").toString(), "convert",
        prefix + "-symbol.json," + prefix + "-0000.params", fromCli.toString(), "--input",
        "data=2,512", "--opset", "13", "--dynamic-batch");
    byte[] expected = Files.readAllBytes(fromCli);
    assertTrue(expected.length > 512 * 4);
    assertArrayEquals(expected, Files.readAllBytes(fromJava));
  }

  @Test
  void badArgumentsThrow(@TempDir Path dir) throws Exception {
    String path = dir.resolve("m.onnx").toString();
    Map<String, long[]> shapes = Map.of("data", new long[] {1, 512});
    try (Model model = Model.load(TestSupport.seedPrefix(), 0)) {
      HybridnetException e = assertThrows(HybridnetException.InvalidArgument.class,
          () -> model.exportOnnx(path, shapes, 22, false));
      assertTrue(e.getMessage().contains("opset 22"), e.getMessage());
      e = assertThrows(HybridnetException.NotFound.class,
          () -> model.exportOnnx(path, Map.of("pixels", new long[] {1, 512})));
      assertTrue(e.getMessage().contains("'pixels'"), e.getMessage());
      e = assertThrows(HybridnetException.IO.class,
          () -> model.exportOnnx("/nonexistent-dir/m.onnx", shapes));
      assertTrue(e.getMessage().contains("/nonexistent-dir/m.onnx"), e.getMessage());
    }
  }
}
