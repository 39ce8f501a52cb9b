package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BlockTest {
  @Test
  void everyLayerKindRunsEagerAndHybridized(@TempDir Path dir) {
    float[] x = TestSupport.randomValues(9, 2 * 3 * 4);
    try (HybridSequential net = new HybridSequential("net_")
            .add(new Flatten(), new Dense(16, null, Map.of("use_bias", "True")), new Activation("tanh"),
                new Dropout(0.5), new Dense(4, "sigmoid"));
        NDArray xa = NDArray.of(x, 2, 3, 4)) {
      net.initialize("normal", 1);
      float[] eager;
      try (NDArray y = net.forward(xa)) {
        assertArrayEquals(new long[] {2, 4}, y.shape());
        eager = y.toFloatArray();
      }
      net.hybridize();
      try (NDArray y = net.forward(xa)) {
        assertArrayEquals(eager, y.toFloatArray(), "hybridized output is bit-identical");
      }
      assertEquals("net", net.name());
      assertTrue(net.toString().startsWith("HybridSequential("), net.toString());
      Map<String, float[]> params = net.parameters();
      assertTrue(params.containsKey("net_dense0_weight"), params.keySet().toString());
      assertEquals(16 * 12, params.get("net_dense0_weight").length);

      try (Symbol program = net.trace()) {
        assertEquals(List.of("data"), program.listArguments().subList(0, 1));
        assertTrue(program.toJson().contains("\"FullyConnected\""));
        Symbol.Shapes shapes = program.inferShape(Map.of("data", new long[] {5, 3, 4}));
        assertArrayEquals(new long[] {5, 4}, shapes.outputs().values().iterator().next());
      }

      Path params1 = dir.resolve("net.params");
      net.saveParameters(params1);
      try (HybridSequential twin = new HybridSequential("twin_")
              .add(new Flatten(), new Dense(16), new Activation("tanh"), new Dropout(0.5),
                  new Dense(4, "sigmoid"))) {
        twin.loadParameters(params1);
        try (NDArray y = twin.forward(xa)) {
          assertArrayEquals(eager, y.toFloatArray(), "save_parameters/load_parameters");
        }
      }
    }
  }

  @Test
  void plainSequentialAndSymbols() {
    try (Sequential seq = new Sequential().add(new Dense(3, "relu"), new Dense(1));
        NDArray x = NDArray.of(new float[] {1, 2, 3, 4}, 2, 2)) {
      seq.initialize("ones", 0);
      try (NDArray y = seq.forward(x)) {
        // ones: every hidden unit is relu(x0 + x1), the output their sum
        assertArrayEquals(new float[] {9, 21}, y.toFloatArray());
      }
    }
    try (Symbol data = Symbol.var("data");
        Symbol fc = Symbol.create("FullyConnected", Map.of("num_hidden", "2"), "fc1", data);
        Symbol again = Symbol.fromJson(fc.toJson())) {
      assertEquals(List.of("data", "fc1_weight", "fc1_bias"), again.listArguments());
      assertEquals(List.of("fc1_output"), again.listOutputs());
      assertEquals(fc.toJson(), again.toJson());
    }
  }
}
