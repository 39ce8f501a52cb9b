package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Model.summary prints the very table `hybridnet summary` prints (which tests/golden/viz checks
 * against MXNet 1.9.1 byte for byte); Block.summary and Symbol.plotNetwork; errors.
 */
class SummaryTest {
  private static String cli(String... args) throws Exception {
    String[] command = new String[args.length + 1];
    command[0] = TestSupport.binDir().resolve("hybridnet").toString();
    System.arraycopy(args, 0, command, 1, args.length);
    return TestSupport.run(command);
  }

  @Test
  void modelSummaryIsTheCommandLines() throws Exception {
    Path prefix = TestSupport.seedPrefix();
    try (Model model = Model.load(prefix, 0)) {
      String table = model.summary(Map.of("data", new long[] {2, 512}));
      assertEquals(cli("summary", prefix.toString(), "0", "--input", "data=2,512"), table);
      assertTrue(table.contains("\nTotal params: "), table);
      assertEquals(cli("summary", prefix.toString(), "0"), model.summary(null));
      try (Symbol graph = model.symbol()) {
        String dot = graph.plotNetwork(Map.of("data", new long[] {2, 512}), true);
        assertEquals(cli("dot", prefix.toString(), "0", "--input", "data=2,512"), dot + "\n");
      }
    }
  }

  @Test
  void summaryErrorsNameTheInput() throws Exception {
    try (Model model = Model.load(TestSupport.seedPrefix(), 0)) {
      HybridnetException e = assertThrows(HybridnetException.NotFound.class,
          () -> model.summary(Map.of("pixels", new long[] {2, 512})));
      assertTrue(e.getMessage().contains("'pixels'"), e.getMessage());
    }
  }

  @Test
  void blockSummaryListsTheLayers() {
    try (HybridSequential net = new HybridSequential("net_").add(new Dense(16, "relu"),
            new Dense(4));
        NDArray x = NDArray.zeros(3, 8)) {
      net.initialize("xavier", 7);
      String table = net.summary(x);
      assertTrue(table.contains(String.format("%20s  %42s %15s\n", "Dense-3", "(3, 16)", "144")),
          table);
      assertTrue(table.contains(String.format("%20s  %42s %15s\n", "Dense-4", "(3, 4)", "68")),
          table);
      assertTrue(table.contains("   Total params: 212\n"), table);
      net.hybridize(true);
      HybridnetException e =
          assertThrows(HybridnetException.InvalidArgument.class, () -> net.summary(x));
      assertTrue(e.getMessage().contains("must not be hybridized"), e.getMessage());
    }
  }
}
