package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LifecycleTest {
  @Test
  void closeTwiceIsHarmlessAndUseAfterCloseThrows() throws Exception {
    NDArray a = NDArray.of(new float[] {1, 2});
    a.close();
    a.close();
    assertTrue(a.isClosed());
    assertThrows(IllegalStateException.class, a::shape);
    assertThrows(IllegalStateException.class, a::toFloatArray);
    assertThrows(IllegalStateException.class, () -> a.copyFrom(new float[2]));
    assertEquals("NDArray(closed)", a.toString());

    Model model = Model.load(TestSupport.seedPrefix(), 0);
    Predictor p = model.newPredictor();
    model.close();
    model.close();
    assertThrows(IllegalStateException.class, model::newPredictor);
    assertThrows(IllegalStateException.class, model::symbol);
    // A predictor keeps the model's weights alive.
    assertEquals(2, p.forward(new float[512], 1, 512).length);
    p.close();
    p.close();
    assertThrows(IllegalStateException.class, () -> p.forward(new float[512], 1, 512));
    assertThrows(IllegalStateException.class, p::forward);
    assertThrows(IllegalStateException.class, p::clone);

    // A closed array passed as an input.
    try (Model m = Model.load(TestSupport.seedPrefix(), 0);
        Predictor q = m.newPredictor()) {
      NDArray x = NDArray.zeros(1, 512);
      x.close();
      assertThrows(IllegalStateException.class, () -> q.forward(x));
      assertThrows(IllegalStateException.class, () -> q.setInput("data", x));
    }

    Symbol s = Symbol.var("x");
    s.close();
    s.close();
    assertThrows(IllegalStateException.class, s::toJson);
  }

  @Test
  void containersCloseTheirChildren() {
    Dense d1 = new Dense(3);
    Dense d2 = new Dense(2);
    HybridSequential net = new HybridSequential().add(d1, d2);
    net.initialize();
    try (NDArray x = NDArray.zeros(1, 4);
        NDArray y = d1.forward(x)) { // a child is usable on its own too
      assertArrayEquals(new long[] {1, 3}, y.shape());
    }
    net.close();
    assertTrue(d1.isClosed() && d2.isClosed());
    assertThrows(IllegalStateException.class, () -> d1.forward(NDArray.zeros(1, 4)));
    net.close();
  }

  @Test
  void theCleanerFreesForgottenObjects() throws InterruptedException {
    long before = TestSupport.gcUntilLive(0, 2000);
    for (int i = 0; i < 20_000; ++i) NDArray.of(new float[64], 64); // never closed
    assertTrue(Hybridnet.liveObjects() >= before + 10_000, "most are still alive before a GC");
    long after = TestSupport.gcUntilLive(before, 20_000);
    assertTrue(after <= before, "the Cleaner freed them: live " + after + ", before " + before);
  }

  /** 100 000 create/close cycles of arrays and predictors: native memory stays flat. */
  @Test
  void createCloseCyclesDoNotGrowNativeMemory() throws Exception {
    try (Model model = Model.load(TestSupport.seedPrefix(), 0)) {
      float[] x = new float[512];
      Runnable cycle = new Runnable() {
        int i;

        @Override
        public void run() {
          try (NDArray a = NDArray.of(x, 1, 512);
              Predictor p = model.newPredictor()) {
            if (++i % 100 == 0) { // plan and run now and then: executor buffers are freed too
              try (NDArray y = p.forward(a)) {
                y.toFloatArray();
              }
            }
          }
        }
      };
      for (int i = 0; i < 10_000; ++i) cycle.run();
      long live0 = Hybridnet.liveObjects();
      long rss0 = TestSupport.rssKb();
      int cycles = 100_000;
      for (int i = 0; i < cycles; ++i) cycle.run();
      long rss1 = TestSupport.rssKb();
      long growthKb = rss1 - rss0;
      System.out.println("create/close cycles: RSS " + rss0 + " kB -> " + rss1 + " kB after "
          + cycles + " cycles (" + growthKb + " kB)");
      assertEquals(live0, Hybridnet.liveObjects(), "every handle was freed");
      // A leak of even 100 bytes per cycle would add ~10 MB.
      assertTrue(growthKb < 8 * 1024,
          "RSS grew by " + growthKb + " kB over " + cycles + " cycles (" + rss0 + " -> " + rss1 + " kB)");
    }
  }

  /** close() on one thread while another runs forwards: never a crash, only clean errors. */
  @Test
  void closeRacingForwardIsSafe() throws Exception {
    try (Model model = Model.load(TestSupport.seedPrefix(), 0)) {
      float[] x = TestSupport.randomValues(1, 512);
      float[] expected;
      try (Predictor p = model.newPredictor()) {
        expected = p.forward(x, 1, 512);
      }
      for (int round = 0; round < 200; ++round) {
        Predictor p = model.newPredictor();
        NDArray input = NDArray.of(x, 1, 512);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        threads.add(new Thread(() -> {
          float[] out = new float[2];
          try {
            for (;;) {
              p.forward(x, new long[] {1, 512}, out);
              if (!java.util.Arrays.equals(expected, out)) throw new AssertionError("wrong output");
            }
          } catch (IllegalStateException closed) {
            // expected once close() won
          } catch (Throwable t) {
            failure.set(t);
          }
        }));
        threads.add(new Thread(() -> {
          try {
            for (;;) {
              try (NDArray y = p.forward(input)) {
                y.toFloatArray();
              }
              input.shape();
            }
          } catch (IllegalStateException closed) {
            // expected
          } catch (Throwable t) {
            failure.set(t);
          }
        }));
        threads.forEach(Thread::start);
        Thread.sleep(0, ThreadLocalRandom.current().nextInt(1_000_000));
        if (round % 2 == 0) {
          p.close();
          input.close();
        } else {
          input.close();
          p.close();
        }
        for (Thread t : threads) t.join(10_000);
        for (Thread t : threads) assertFalse(t.isAlive(), "a thread is stuck");
        if (failure.get() != null) throw new AssertionError("round " + round, failure.get());
      }
    }
  }
}
