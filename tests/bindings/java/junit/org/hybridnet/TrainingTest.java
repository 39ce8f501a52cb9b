package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The training API: autograd scopes, parameters, optimizers, trainer, losses, metrics, loader. */
@SuppressWarnings("try") // autograd scopes are opened for their close(), not referenced
class TrainingTest {
  private static final float[] X = {-1.5f, -0.25f, 0.5f, 2f};

  @Test
  void backwardOfARecordedOpFillsTheVariablesGradient() {
    try (NDArray x = NDArray.of(X, 2, 2)) {
      x.attachGrad();
      NDArray y;
      assertFalse(Autograd.isRecording());
      try (Autograd.Scope s = Autograd.record()) {
        assertTrue(Autograd.isRecording());
        assertTrue(Autograd.isTraining());
        y = Op.invoke1("exp", null, x);
      }
      assertFalse(Autograd.isRecording());
      assertFalse(Autograd.isTraining());
      try (NDArray out = y;
          NDArray dx = x.grad()) {
        out.backward();
        float[] expected = new float[X.length];
        for (int i = 0; i < X.length; ++i) expected[i] = (float) Math.exp(X[i]);
        assertArrayEquals(out.toFloatArray(), dx.toFloatArray());
        assertArrayEquals(expected, dx.toFloatArray(), 1e-6f);
        assertArrayEquals(new long[] {2, 2}, dx.shape());
      }
    }
  }

  @Test
  void scopesSetAndRestoreTheThreadsFlags() {
    try (Autograd.Scope r = Autograd.record(false)) {
      assertTrue(Autograd.isRecording());
      assertFalse(Autograd.isTraining());
      try (Autograd.Scope t = Autograd.trainMode()) {
        assertTrue(Autograd.isRecording());
        assertTrue(Autograd.isTraining());
        try (Autograd.Scope p = Autograd.pause()) {
          assertFalse(Autograd.isRecording());
          assertFalse(Autograd.isTraining());
        }
        try (Autograd.Scope p = Autograd.pause(true)) {
          assertFalse(Autograd.isRecording());
          assertTrue(Autograd.isTraining());
        }
        try (Autograd.Scope m = Autograd.predictMode()) {
          assertTrue(Autograd.isRecording());
          assertFalse(Autograd.isTraining());
        }
        assertTrue(Autograd.isTraining());
      }
      assertFalse(Autograd.isTraining());
    }
    assertFalse(Autograd.isRecording());
  }

  @Test
  void gradWithHeadGradientsLeavesTheBuffersAlone() {
    try (NDArray x = NDArray.of(X, 4);
        NDArray three = NDArray.of(new float[] {3, 3, 3, 3}, 4)) {
      x.attachGrad();
      NDArray y;
      try (Autograd.Scope s = Autograd.record()) {
        y = Op.invoke1("square", null, x);
      }
      NDArray[] g = Autograd.grad(new NDArray[] {y}, new NDArray[] {x}, new NDArray[] {three},
          false, false, true);
      try (NDArray out = y;
          NDArray dx = g[0];
          NDArray buffer = x.grad()) {
        float[] expected = new float[X.length];
        for (int i = 0; i < X.length; ++i) expected[i] = 6 * X[i];
        assertArrayEquals(expected, dx.toFloatArray());
        assertArrayEquals(new float[4], buffer.toFloatArray(), "the buffer stays zero");
      }
    }
  }

  @Test
  void detachStopsTheGradientAndAddAccumulates() {
    try (NDArray x = NDArray.of(X, 4)) {
      x.attachGrad("add");
      for (int round = 0; round < 2; ++round) {
        NDArray y;
        NDArray z;
        try (Autograd.Scope s = Autograd.record()) {
          y = Op.invoke1("exp", null, x);
          try (NDArray d = y.detach()) {
            z = Op.invoke1("elemwise_mul", null, d, x); // dz/dx = exp(x) through x only
          }
        }
        try (NDArray a = y;
            NDArray b = z) {
          b.backward();
        }
      }
      try (NDArray dx = x.grad()) {
        float[] expected = new float[X.length];
        for (int i = 0; i < X.length; ++i) expected[i] = 2 * (float) Math.exp(X[i]);
        assertArrayEquals(expected, dx.toFloatArray(), 1e-5f);
      }
    }
  }

  @Test
  void autogradMisuseIsAClearError() throws Exception {
    try (NDArray x = NDArray.of(X, 4)) {
      IllegalStateException noGrad = assertThrows(IllegalStateException.class, x::grad);
      assertTrue(noGrad.getMessage().contains("attachGrad"), noGrad.getMessage());
      assertThrows(IllegalArgumentException.class, () -> x.attachGrad("sometimes"));
      x.attachGrad();
      // Computed outside a recording scope: nothing to differentiate.
      try (NDArray y = Op.invoke1("exp", null, x)) {
        HybridnetException.InvalidArgument e =
            assertThrows(HybridnetException.InvalidArgument.class, y::backward);
        assertTrue(e.getMessage().contains("hn_autograd_backward"), e.getMessage());
      }
      NDArray y;
      try (Autograd.Scope s = Autograd.record()) {
        y = Op.invoke1("exp", null, x);
      }
      try (NDArray out = y) {
        assertThrows(IllegalArgumentException.class,
            () -> Autograd.backward(new NDArray[] {out}, new NDArray[0], false, true));
        out.backward();
        // The graph was released by the first backward.
        assertThrows(HybridnetException.InvalidArgument.class, out::backward);
      }
      // A scope is the opening thread's.
      Autograd.Scope scope = Autograd.record();
      ExecutorService other = Executors.newSingleThreadExecutor();
      try {
        Future<?> f = other.submit(scope::close);
        java.util.concurrent.ExecutionException e =
            assertThrows(java.util.concurrent.ExecutionException.class, f::get);
        assertTrue(e.getCause() instanceof IllegalStateException, e.getCause().toString());
      } finally {
        other.shutdownNow();
        scope.close();
      }
      assertFalse(Autograd.isRecording());
      NDArray closed = NDArray.of(X, 4);
      closed.close();
      assertThrows(IllegalStateException.class, closed::attachGrad);
    }
  }

  /** A Dense(2) over 3 inputs with known weights, L2 loss, one SGD step: w - lr * g / batch. */
  @Test
  void trainerStepAppliesSgdToTheGradients() {
    try (HybridSequential net = denseOf3();
        Loss l2 = new Loss("L2Loss");
        NDArray x = NDArray.of(new float[] {1, 2, 3, -1, 0.5f, 2}, 2, 3);
        NDArray label = NDArray.of(new float[] {1, 0, 0, 1}, 2, 2);
        Trainer trainer = new Trainer(net, "sgd", Map.of("learning_rate", "0.1"))) {
      net.initialize("xavier", 3);
      List<String> names = net.parameterNames();
      assertEquals(2, names.size());
      assertTrue(names.get(0).endsWith("_weight"), names.toString());
      assertTrue(names.get(1).endsWith("_bias"), names.toString());
      Parameter w = net.parameter(names.get(0));
      float[] w0;
      try (NDArray v = w.data()) {
        w0 = v.toFloatArray();
      }
      NDArray loss;
      try (Autograd.Scope s = Autograd.record();
          NDArray out = net.forward(x)) {
        loss = l2.forward(out, label);
      }
      float[] g;
      try (NDArray l = loss) {
        assertArrayEquals(new long[] {2}, l.shape());
        l.backward();
        try (NDArray grad = w.grad()) {
          g = grad.toFloatArray();
        }
      }
      assertNotEquals(0f, g[0]);
      trainer.step(2);
      try (NDArray v = w.data()) {
        float[] w1 = v.toFloatArray();
        for (int i = 0; i < w0.length; ++i) assertEquals(w0[i] - 0.1f * (g[i] / 2), w1[i], 1e-6f);
      }
      assertEquals(0.1f, trainer.learningRate(), 0f);
      trainer.setLearningRate(0.05f);
      assertEquals(0.05f, trainer.learningRate(), 0f);
      assertEquals(1, trainer.optimizer().numUpdate());
      // No backward since that step: the stale gradient is an error, unless ignored.
      HybridnetException.InvalidArgument stale =
          assertThrows(HybridnetException.InvalidArgument.class, () -> trainer.step(2));
      assertTrue(stale.getMessage().contains(names.get(0)), stale.getMessage());
      trainer.step(2, true);
    }
  }

  @Test
  void hybridizedTrainingMatchesEagerTraining() {
    float[][] eager = trainMlp(false);
    float[][] hybrid = trainMlp(true);
    for (int i = 0; i < eager.length; ++i) assertArrayEquals(eager[i], hybrid[i], 1e-6f);
  }

  /** Three Adam steps of a small MLP; returns its parameters. */
  private static float[][] trainMlp(boolean hybridize) {
    try (HybridSequential net = new HybridSequential()
            .add(new Dense(8, "relu", Map.of("in_units", "4")),
                new Dense(3, null, Map.of("in_units", "8")));
        Loss ce = new Loss("SoftmaxCrossEntropyLoss");
        NDArray x = NDArray.of(TestSupport.randomValues(5, 24), 6, 4);
        NDArray y = NDArray.of(new float[] {0, 1, 2, 2, 1, 0}, 6);
        Trainer trainer = new Trainer(net, "adam", Map.of("learning_rate", "0.01"))) {
      net.initialize("xavier", 11);
      if (hybridize) net.hybridize();
      for (int step = 0; step < 3; ++step) {
        NDArray loss;
        try (Autograd.Scope s = Autograd.record();
            NDArray out = net.forward(x)) {
          loss = ce.forward(out, y);
        }
        try (NDArray l = loss) {
          l.backward();
        }
        trainer.step(6);
      }
      return net.parameters().values().toArray(new float[0][]);
    }
  }

  @Test
  void parametersTellAndTakeTheirAttributes() {
    try (HybridSequential net = denseOf3()) {
      net.initialize();
      Parameter w = net.collectParameters().get(0);
      assertEquals("write", w.gradReq());
      assertEquals(1.0, w.lrMult());
      w.setLrMult(2.5);
      w.setWdMult(0);
      assertEquals(2.5, w.lrMult());
      assertEquals(0.0, w.wdMult());
      try (NDArray g = w.grad()) {
        assertArrayEquals(new float[6], g.toFloatArray());
      }
      w.setGradReq("null");
      assertEquals("null", w.gradReq());
      assertThrows(HybridnetException.InvalidArgument.class, w::grad);
      net.setGradReq("add");
      assertEquals("add", w.gradReq());
      net.zeroGrad();
      w.zeroGrad();
      assertThrows(HybridnetException.InvalidArgument.class, () -> w.setGradReq("often"));
      HybridnetException.NotFound missing =
          assertThrows(HybridnetException.NotFound.class, () -> net.parameter("nope_weight"));
      assertTrue(missing.getMessage().contains("nope_weight"), missing.getMessage());
      net.close();
      // Parameters of a freed block: a clear error, not a crash.
      assertThrows(IllegalStateException.class, w::data);
      assertThrows(IllegalStateException.class, w::lrMult);
    }
  }

  @Test
  void trainerErrors(@TempDir Path dir) {
    try (HybridSequential net = denseOf3()) {
      net.initialize();
      HybridnetException.NotFound unknown = assertThrows(HybridnetException.NotFound.class,
          () -> new Trainer(net, "gradient_ascent", Map.of()));
      assertTrue(unknown.getMessage().contains("adam"), "lists the names: " + unknown.getMessage());
      assertThrows(HybridnetException.InvalidArgument.class,
          () -> new Optimizer("sgd", Map.of("learning_rat", "0.1")));
      assertThrows(HybridnetException.InvalidArgument.class,
          () -> new Optimizer("sgd", Map.of("momentum", "fast")));
      Trainer trainer = new Trainer(net, "adam", Map.of());
      Path states = dir.resolve("net.states");
      trainer.saveStates(states);
      assertTrue(Files.isRegularFile(states));
      trainer.loadStates(states);
      assertThrows(HybridnetException.class, () -> trainer.loadStates(dir.resolve("none.states")));
      trainer.close();
      trainer.close();
      assertThrows(IllegalStateException.class, () -> trainer.step(1));
      assertThrows(IllegalStateException.class, trainer::learningRate);
      assertTrue(trainer.optimizer().isClosed(), "a trainer closes the optimizer it made");
      Trainer second = new Trainer(net, "sgd", Map.of());
      net.close();
      assertThrows(IllegalStateException.class, () -> second.step(1));
      second.close();
      assertThrows(IllegalStateException.class, () -> new Trainer(net, "sgd", Map.of()));
    }
  }

  @Test
  void optimizersAndSchedulers() {
    for (String name : List.of("sgd", "nag", "adam", "adamax", "nadam", "rmsprop", "adagrad",
        "adadelta", "signum", "ftml", "ftrl", "lamb", "lars", "dcasgd", "sgld")) {
      try (Optimizer o = new Optimizer(name, Map.of("learning_rate", "0.5"))) {
        assertEquals(0.5f, o.learningRate(), 0f, name);
        assertEquals("0.5", o.hyperParameters().get("lr"), name + " " + o.hyperParameters());
      }
    }
    try (Optimizer sgd = new Optimizer("SGD", Map.of("learning_rate", "0.1", "momentum", "0.9"));
        LRScheduler factor = new LRScheduler("factor", Map.of("step", "2", "factor", "0.5"))) {
      assertEquals("0.9", sgd.hyperParameters().get("momentum"));
      sgd.setRescaleGrad(0.25f);
      assertEquals(0.25f, sgd.rescaleGrad(), 0f);
      assertEquals("FactorScheduler", factor.params().get("class"));
      sgd.setLRScheduler(factor);
      factor.close();
      assertEquals(0.1f, sgd.learningRate(), 1e-7f);
      assertThrows(HybridnetException.InvalidArgument.class, () -> sgd.setLearningRate(1));
      sgd.setLRScheduler(null);
      sgd.setLearningRate(1);
      assertEquals(1f, sgd.learningRate(), 0f);
    }
    try (LRScheduler poly = new LRScheduler("poly",
        Map.of("max_update", "10", "base_lr", "1.0", "pwr", "1"))) {
      assertEquals(1f, poly.learningRate(0), 1e-6f);
      assertEquals(0.5f, poly.learningRate(5), 1e-6f);
    }
    assertThrows(HybridnetException.NotFound.class, () -> new LRScheduler("zigzag", Map.of()));
    assertThrows(HybridnetException.InvalidArgument.class,
        () -> new LRScheduler("factor", Map.of("step", "0")));
  }

  @Test
  void lossesAreBlockKinds() {
    try (Loss l2 = new Loss("L2Loss");
        Loss l1 = new Loss("L1Loss", Map.of("weight", "2"));
        NDArray pred = NDArray.of(new float[] {1, 2, 3, 4}, 2, 2);
        NDArray label = NDArray.of(new float[] {0, 2, 5, 4}, 2, 2);
        NDArray a = l2.forward(pred, label);
        NDArray b = l1.forward(pred, label)) {
      assertArrayEquals(new float[] {0.25f, 1f}, a.toFloatArray()); // mean of (p - l)^2 / 2
      assertArrayEquals(new float[] {1f, 2f}, b.toFloatArray()); // 2 * mean |p - l|
    }
    HybridnetException.NotFound e =
        assertThrows(HybridnetException.NotFound.class, () -> new Loss("L3Loss"));
    assertTrue(e.getMessage().contains("SoftmaxCrossEntropyLoss"), e.getMessage());
    assertThrows(HybridnetException.InvalidArgument.class,
        () -> new Loss("SoftmaxCrossEntropyLoss", Map.of("sparse", "True")));
  }

  @Test
  void metrics() {
    try (Metric acc = new Metric("acc");
        NDArray pred = NDArray.of(new float[] {0.9f, 0.1f, 0.2f, 0.8f, 0.7f, 0.3f}, 3, 2);
        NDArray label = NDArray.of(new float[] {0, 1, 1}, 3)) {
      assertEquals("Accuracy", acc.kind());
      assertTrue(Double.isNaN(acc.value()));
      acc.update(label, pred);
      assertEquals(2.0 / 3, acc.value(), 1e-12);
      assertEquals(Map.of("accuracy", 2.0 / 3), acc.get());
      acc.resetLocal();
      assertTrue(Double.isNaN(acc.value()));
      assertEquals(2.0 / 3, acc.getGlobal().get("accuracy"), 1e-12);
      acc.reset();
      assertTrue(Double.isNaN(acc.getGlobal().get("accuracy")));
      try (NDArray wrong = NDArray.of(new float[] {0, 1}, 2)) {
        assertThrows(HybridnetException.class, () -> acc.update(wrong, pred));
      }
    }
    try (Metric both = new Metric("composite", Map.of("metrics", "acc,mse"))) {
      assertEquals(List.of("accuracy", "mse"), new ArrayList<>(both.get().keySet()));
    }
    HybridnetException.NotFound e =
        assertThrows(HybridnetException.NotFound.class, () -> new Metric("precision_at_lunch"));
    assertTrue(e.getMessage().contains("acc"), e.getMessage());
    assertThrows(HybridnetException.InvalidArgument.class,
        () -> new Metric("acc", Map.of("axis", "sideways")));
  }

  @Test
  void dataLoaderBatchesInOrderAndShuffled() {
    float[] values = new float[10];
    for (int i = 0; i < 10; ++i) values[i] = i;
    try (NDArray data = NDArray.of(values, 10, 1);
        NDArray labels = NDArray.of(values, 10);
        DataLoader keep = new DataLoader(new NDArray[] {data, labels}, 4);
        DataLoader discard = new DataLoader(new NDArray[] {data, labels}, 4, false, "discard", 0);
        DataLoader shuffled = new DataLoader(new NDArray[] {data, labels}, 4, true, "keep", 42);
        DataLoader again = new DataLoader(new NDArray[] {data, labels}, 4, true, "keep", 42)) {
      assertEquals(3, keep.numBatches());
      assertEquals(2, discard.numBatches());
      assertEquals(List.of(List.of(0f, 1f, 2f, 3f), List.of(4f, 5f, 6f, 7f), List.of(8f, 9f)),
          rows(keep));
      assertEquals(2, rows(discard).size());
      List<List<Float>> first = rows(shuffled);
      List<List<Float>> second = rows(shuffled);
      assertEquals(first, rows(again), "the same seed gives the same order");
      assertNotEquals(first, second, "each epoch draws a new order");
      List<Float> all = new ArrayList<>();
      first.forEach(all::addAll);
      all.sort(null);
      assertEquals(Arrays.asList(0f, 1f, 2f, 3f, 4f, 5f, 6f, 7f, 8f, 9f), all);
      assertThrows(HybridnetException.InvalidArgument.class,
          () -> new DataLoader(new NDArray[] {data}, 0));
      assertThrows(HybridnetException.InvalidArgument.class,
          () -> new DataLoader(new NDArray[] {data}, 2, false, "sometimes", 0));
      try (NDArray shorter = NDArray.of(new float[3], 3)) {
        assertThrows(HybridnetException.Shape.class,
            () -> new DataLoader(new NDArray[] {data, shorter}, 2));
      }
    }
  }

  /** A Dense(2) over 3 inputs in a container. */
  private static HybridSequential denseOf3() {
    return new HybridSequential().add(new Dense(2, null, Map.of("in_units", "3")));
  }

  /** One epoch's label rows; checks that each batch's data equals its labels. */
  private static List<List<Float>> rows(DataLoader loader) {
    List<List<Float>> batches = new ArrayList<>();
    for (NDArray[] batch : loader) {
      try (NDArray x = batch[0];
          NDArray y = batch[1]) {
        assertEquals(2, batch.length);
        float[] labels = y.toFloatArray();
        assertArrayEquals(labels, x.toFloatArray());
        List<Float> row = new ArrayList<>();
        for (float v : labels) row.add(v);
        batches.add(row);
      }
    }
    return batches;
  }
}
