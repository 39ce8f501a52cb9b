package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One export, two languages, the same numbers (bit-identical: the same kernels run). */
class CrossLanguageTest {
  /** The C++ seed walkthrough's export, run by Java and by the C++ core on the same input. */
  @Test
  void seedExportWrittenByCppGivesTheSameNumbersInJava(@TempDir Path dir) throws Exception {
    Path prefix = TestSupport.seedPrefix();
    for (int batch : new int[] {1, 4}) {
      float[] x = TestSupport.randomValues(batch, batch * 512);
      Path in = dir.resolve("x" + batch + ".npy");
      Path out = dir.resolve("y" + batch + ".npy");
      try (NDArray xa = NDArray.of(x, batch, 512)) {
        xa.save(in);
      }
      TestSupport.cppRun(prefix, in, out, false);
      float[] cpp;
      try (NDArray y = NDArray.load(out)) {
        assertArrayEquals(new long[] {batch, 2}, y.shape());
        cpp = y.toFloatArray();
      }
      Path cli = dir.resolve("y_cli" + batch + ".npy");
      TestSupport.cliRun(prefix, in, cli);
      try (NDArray y = NDArray.load(cli)) {
        assertArrayEquals(cpp, y.toFloatArray(), "hybridnet run (CLI), batch " + batch);
      }
      try (Model model = Model.load(prefix, 0);
          Predictor p = model.newPredictor()) {
        assertEquals(java.util.List.of("data"), model.inputNames());
        assertArrayEquals(cpp, p.forward(x, batch, 512), "Model/Predictor, batch " + batch);
      }
      try (SymbolBlock block =
              SymbolBlock.imports(Path.of(prefix + "-symbol.json"), Path.of(prefix + "-0000.params"));
          NDArray xa = NDArray.of(x, batch, 512)) {
        try (NDArray y = block.forward(xa)) {
          assertArrayEquals(cpp, y.toFloatArray(), "SymbolBlock eager, batch " + batch);
        }
        block.hybridize();
        try (NDArray y = block.forward(xa)) {
          assertArrayEquals(cpp, y.toFloatArray(), "SymbolBlock hybridized, batch " + batch);
        }
      }
    }
  }

  /** A model built and exported in Java, loaded by the C++ core: the same numbers. */
  @Test
  void modelBuiltInJavaLoadsInCppWithTheSameNumbers(@TempDir Path dir) throws Exception {
    float[] x = TestSupport.randomValues(42, 3 * 512);
    float[] javaOut;
    String prefix = dir.resolve("java_mlp").toString();
    try (HybridSequential net =
            new HybridSequential().add(new Dense(256, "relu"), new Dense(128, "relu"), new Dense(2));
        NDArray xa = NDArray.of(x, 3, 512)) {
      net.initialize("xavier", 7);
      float[] eager;
      try (NDArray y = net.forward(xa)) {
        eager = y.toFloatArray();
      }
      net.hybridize();
      try (NDArray y = net.forward(xa)) {
        javaOut = y.toFloatArray();
      }
      assertArrayEquals(eager, javaOut, "hybridized == eager");
      net.export(prefix);
      xa.save(dir.resolve("x.npy"));
    }
    Path symbol = Path.of(prefix + "-symbol.json");
    Path params = Path.of(prefix + "-0000.params");
    for (boolean hybridize : new boolean[] {false, true}) {
      Path out = dir.resolve("y_cpp_" + hybridize + ".npy");
      TestSupport.cppRun(Path.of(prefix), dir.resolve("x.npy"), out, hybridize);
      try (NDArray y = NDArray.load(out)) {
        assertArrayEquals(new long[] {3, 2}, y.shape());
        assertArrayEquals(javaOut, y.toFloatArray(), "C++ core, hybridize=" + hybridize);
      }
    }
    Path cli = dir.resolve("y_cli.npy");
    TestSupport.cliRun(Path.of(prefix), dir.resolve("x.npy"), cli);
    try (NDArray y = NDArray.load(cli)) {
      assertArrayEquals(javaOut, y.toFloatArray(), "hybridnet run (CLI)");
    }
    // The same files from memory give the same numbers too.
    try (Model m = Model.fromBytes(Files.readAllBytes(symbol), Files.readAllBytes(params));
        Predictor p = m.newPredictor()) {
      assertArrayEquals(javaOut, p.forward(x, 3, 512));
    }
  }

  /** The same seed gives the same weights (hn_block_initialize seeds the native generator). */
  @Test
  void seededInitializationIsReproducible() {
    float[] x = TestSupport.randomValues(5, 16);
    float[][] outs = new float[2][];
    for (int i = 0; i < 2; ++i) {
      try (HybridSequential net = new HybridSequential().add(new Dense(8, "tanh"), new Dense(3));
          NDArray xa = NDArray.of(x, 1, 16)) {
        net.initialize("uniform", 123);
        try (NDArray y = net.forward(xa)) {
          outs[i] = y.toFloatArray();
        }
      }
    }
    assertArrayEquals(outs[0], outs[1]);
  }
}
