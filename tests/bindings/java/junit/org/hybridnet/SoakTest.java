package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Soak: Model/Predictor/NDArray create-forward-close cycles and training steps (autograd, loss,
 * trainer, metric, data loader), closed and left to the Cleaner, keep the RSS and the native
 * handle count ({@code hn_debug_live_handles}) flat; {@code close()} racing {@code forward()} on
 * many threads never crashes. CTest runs it short (java.soak, in {@code make test}); {@code make
 * soak} runs it long through HYBRIDNET_SOAK_CYCLES, HYBRIDNET_SOAK_ROUNDS and
 * HYBRIDNET_SOAK_TRAIN_STEPS. Each test prints its figures.
 */
class SoakTest {
  private static final int CYCLES = envInt("HYBRIDNET_SOAK_CYCLES", 5_000);
  private static final int ROUNDS = envInt("HYBRIDNET_SOAK_ROUNDS", 300);
  private static final int TRAIN_STEPS = envInt("HYBRIDNET_SOAK_TRAIN_STEPS", 1_000);
  private static final int TRAIN_BATCH = 16;
  private static final int WARM_UP = Math.max(1_000, CYCLES / 10);
  /**
   * The Cleaner variant collects garbage every this many cycles. A cycle leaves a model to the
   * Cleaner (about 0.7 MB): with a collection every 200 cycles the memory awaiting one reached
   * 130 MB, and its high-water mark moved the RSS by -2 to +17 MB between runs.
   */
  private static final int GC_EVERY = 50;
  /**
   * The same for training steps, which leave more native memory per step to the Cleaner (the
   * batch, the outputs and their recorded graph): the memory awaiting a collection stays small.
   */
  private static final int TRAIN_GC_EVERY = 25;
  private static final int RACE_THREADS = 8;
  /** After warm-up the RSS may move by allocator noise, not by a leak: 16 MB over 5 000+ cycles. */
  private static final long RSS_TOLERANCE_KB = 16 * 1024;

  private static String prefix;
  private static float[] input;
  private static float[] expected;
  private static long javaLiveAtStart;
  private static long nativeLiveAtStart;

  @BeforeAll
  static void referenceOutput() throws Exception {
    prefix = TestSupport.seedPrefix().toString();
    input = TestSupport.randomValues(7, 512);
    javaLiveAtStart = TestSupport.gcUntilLive(0, 10_000);
    nativeLiveAtStart = Hybridnet.nativeLiveHandles();
    try (Model model = Model.load(prefix, 0);
        Predictor p = model.newPredictor()) {
      expected = p.forward(input, 1, 512);
    }
    System.out.println("soak: " + CYCLES + " cycles, " + ROUNDS + " race rounds x " + RACE_THREADS
        + " threads; " + Runtime.getRuntime().availableProcessors() + " CPUs, OPENBLAS_NUM_THREADS="
        + System.getenv("OPENBLAS_NUM_THREADS") + ", kernel threads " + Hybridnet.numThreads());
  }

  @AfterAll
  static void everyHandleIsFreed() throws InterruptedException {
    assertEquals(javaLiveAtStart, TestSupport.gcUntilLive(javaLiveAtStart, 20_000));
    assertEquals(nativeLiveAtStart, Hybridnet.nativeLiveHandles(), "native handles after the soak");
  }

  /** One cycle: load, predictor, input array, forward, check; closed when {@code close}. */
  private static void cycle(boolean close) {
    Model model = Model.load(prefix, 0);
    Predictor p = model.newPredictor();
    NDArray x = NDArray.of(input, 1, 512);
    NDArray y = p.forward(x);
    float[] out = y.toFloatArray();
    if (close) {
      y.close();
      x.close();
      p.close();
      model.close();
    }
    if (!java.util.Arrays.equals(expected, out)) throw new AssertionError("wrong output");
  }

  /** Runs the cycles after a warm-up; asserts flat RSS and live handles; returns the figures. */
  private static void soak(String name, boolean close) throws Exception {
    soak(name, close, CYCLES, WARM_UP, GC_EVERY, SoakTest::cycle, javaLiveAtStart,
        nativeLiveAtStart);
  }

  /**
   * {@link #soak(String, boolean)} of {@code cycles} calls of {@code cycle}, with {@code
   * javaLive} Java objects and {@code nativeLive} native handles alive around the cycles.
   */
  private static void soak(String name, boolean close, int cycles, int warmUp, int gcEvery,
      Cycle cycle, long javaLive, long nativeLive) throws Exception {
    for (int i = 0; i < warmUp; ++i) {
      cycle.run(close);
      if (!close && i % gcEvery == 0) System.gc();
    }
    TestSupport.gcUntilLive(javaLive, 20_000);
    long native0 = Hybridnet.nativeLiveHandles();
    long rss0 = TestSupport.rssKb();
    long start = System.nanoTime();
    long peakLive = 0;
    for (int i = 0; i < cycles; ++i) {
      cycle.run(close);
      if (!close && i % gcEvery == gcEvery - 1) {
        peakLive = Math.max(peakLive, Hybridnet.nativeLiveHandles() - native0);
        System.gc();
      }
    }
    long java1 = TestSupport.gcUntilLive(javaLive, 30_000);
    double seconds = (System.nanoTime() - start) / 1e9;
    long native1 = Hybridnet.nativeLiveHandles();
    long rss1 = TestSupport.rssKb();
    System.out.printf("soak %s: %d cycles in %.1f s; RSS %d kB -> %d kB (%+d kB); native handles "
            + "%d -> %d (peak +%d between GCs); Java objects %d -> %d%n",
        name, cycles, seconds, rss0, rss1, rss1 - rss0, native0, native1, peakLive,
        javaLive, java1);
    assertEquals(javaLive, java1, "Java objects not freed");
    assertEquals(native0, native1, "native handles not freed");
    assertEquals(nativeLive, native1, "native handles differ from those before the cycles");
    assertTrue(rss1 - rss0 < RSS_TOLERANCE_KB,
        "RSS grew by " + (rss1 - rss0) + " kB over " + cycles + " cycles (" + rss0 + " -> " + rss1
            + " kB)");
  }

  /** One soak cycle; {@code close} says whether it closes what it makes. */
  private interface Cycle {
    void run(boolean close);
  }

  /**
   * Training steps of a hybridized MLP (512-64-2, batch {@value #TRAIN_BATCH}): each step makes a
   * data loader over fresh arrays, records forward and loss, runs backward, steps the trainer,
   * reads the loss sum and updates a metric. With {@code close} everything is closed, else all
   * (the per-step objects, and at the end the net, loss and trainer) is left to the Cleaner.
   */
  @SuppressWarnings("try") // the recording scope is opened for its close()
  private static void trainingSoak(String name, boolean close) throws Exception {
    HybridSequential net = new HybridSequential()
        .add(new Dense(64, "relu", java.util.Map.of("in_units", "512")), new Dense(2));
    net.initialize("xavier", 5);
    net.hybridize();
    Loss lossFn = new Loss("SoftmaxCrossEntropyLoss");
    Trainer trainer = new Trainer(net, "sgd", java.util.Map.of("learning_rate", "0.01"));
    float[] x = TestSupport.randomValues(3, TRAIN_BATCH * 512);
    float[] y = new float[TRAIN_BATCH];
    for (int i = 0; i < TRAIN_BATCH; ++i) y[i] = i % 2;
    // Alive around the steps: the net, its two Dense layers, the loss, the trainer, its optimizer.
    long javaLive = TestSupport.gcUntilLive(javaLiveAtStart + 6, 20_000);
    long nativeLive = Hybridnet.nativeLiveHandles();
    Cycle step = c -> {
      NDArray data = NDArray.of(x, TRAIN_BATCH, 512);
      NDArray label = NDArray.of(y, TRAIN_BATCH);
      DataLoader loader = new DataLoader(new NDArray[] {data, label}, TRAIN_BATCH);
      Metric loss = new Metric("loss");
      for (NDArray[] batch : loader) {
        NDArray out;
        NDArray l;
        try (Autograd.Scope s = Autograd.record()) {
          out = net.forward(batch[0]);
          l = lossFn.forward(out, batch[1]);
        }
        l.backward();
        trainer.step(TRAIN_BATCH);
        NDArray sum = l.sum();
        if (!Float.isFinite(sum.toFloat())) throw new AssertionError("the loss is not finite");
        loss.update(new NDArray[0], new NDArray[] {l});
        if (c) {
          sum.close();
          l.close();
          out.close();
          batch[0].close();
          batch[1].close();
        }
      }
      if (loss.value() <= 0) throw new AssertionError("no loss recorded");
      if (c) {
        loss.close();
        loader.close();
        label.close();
        data.close();
      }
    };
    soak(name, close, TRAIN_STEPS, Math.max(100, TRAIN_STEPS / 10), TRAIN_GC_EVERY, step, javaLive,
        nativeLive);
    if (close) {
      trainer.close();
      lossFn.close();
      net.close();
    }
  }

  @Test
  void closedTrainingStepsStayFlat() throws Exception {
    trainingSoak("training closed", true);
  }

  @Test
  void trainingStepsLeftToTheCleanerStayFlat() throws Exception {
    trainingSoak("training Cleaner", false);
  }

  @Test
  void closedCyclesStayFlat() throws Exception {
    soak("closed", true);
  }

  @Test
  void cyclesLeftToTheCleanerStayFlat() throws Exception {
    soak("Cleaner", false);
  }

  /**
   * Each round: {@value #RACE_THREADS} threads run forwards (float[] and NDArray), clones and
   * predictor creation on one predictor, one input array and one model, while this thread closes
   * them in a random order at a random moment. Only IllegalStateException (closed) may come out;
   * every result before it is right; no thread hangs; nothing leaks.
   */
  @Test
  void closeRacingForwardOnManyThreadsIsSafe() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(RACE_THREADS);
    long native0 = Hybridnet.nativeLiveHandles();
    long start = System.nanoTime();
    long forwards = 0;
    long closedErrors = 0;
    try {
      for (int round = 0; round < ROUNDS; ++round) {
        Model model = Model.load(prefix, 0);
        Predictor p = model.newPredictor();
        NDArray x = NDArray.of(input, 1, 512);
        CountDownLatch started = new CountDownLatch(RACE_THREADS);
        List<Future<long[]>> results = new ArrayList<>();
        for (int t = 0; t < RACE_THREADS; ++t) {
          final int kind = t % 4;
          results.add(pool.submit(() -> race(kind, model, p, x, started)));
        }
        started.await();
        Thread.sleep(0, ThreadLocalRandom.current().nextInt(500_000));
        NativeResource[] order = round % 3 == 0 ? new NativeResource[] {p, x, model}
            : round % 3 == 1 ? new NativeResource[] {model, x, p}
            : new NativeResource[] {x, model, p};
        for (NativeResource r : order) r.close();
        for (Future<long[]> f : results) {
          long[] counts = f.get(30, TimeUnit.SECONDS); // a hang fails here
          forwards += counts[0];
          closedErrors += counts[1];
        }
      }
    } finally {
      pool.shutdownNow();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long native1 = Hybridnet.nativeLiveHandles();
    System.out.printf("soak close-vs-forward: %d rounds x %d threads in %.1f s; %d forwards, %d "
            + "closed errors; native handles %d -> %d%n",
        ROUNDS, RACE_THREADS, seconds, forwards, closedErrors, native0, native1);
    assertEquals(native0, native1, "native handles after the races");
    assertEquals((long) ROUNDS * RACE_THREADS, closedErrors, "every thread ended on a closed object");
  }

  /**
   * One racing thread: loops until a closed object stops it. Kinds: 0 forward(float[]), 1
   * forward(NDArray), 2 clone() then forward on the clone, 3 newPredictor() on the model then
   * forward. Returns {forwards, 1}.
   */
  private static long[] race(int kind, Model model, Predictor p, NDArray x, CountDownLatch started) {
    float[] out = new float[expected.length];
    long forwards = 0;
    started.countDown();
    try {
      for (;;) {
        switch (kind) {
          case 0:
            p.forward(input, new long[] {1, 512}, out);
            break;
          case 1:
            try (NDArray y = p.forward(x)) {
              y.copyTo(out);
            }
            break;
          case 2:
            try (Predictor q = p.clone()) {
              q.forward(input, new long[] {1, 512}, out);
            }
            break;
          default:
            try (Predictor q = model.newPredictor()) {
              q.forward(input, new long[] {1, 512}, out);
            }
            break;
        }
        assertArrayEquals(expected, out, "output of a racing forward");
        ++forwards;
      }
    } catch (IllegalStateException closed) {
      assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
      return new long[] {forwards, 1};
    }
  }

  private static int envInt(String name, int fallback) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) return fallback;
    int n = Integer.parseInt(value);
    if (n <= 0) throw new IllegalArgumentException(name + " must be > 0, got " + value);
    return n;
  }
}
