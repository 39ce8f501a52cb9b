package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class ConcurrencyTest {
  /** 8 threads, each with its own predictor over one shared model: identical results. */
  @Test
  void eightThreadsWithTheirOwnPredictorsAgree() throws Exception {
    float[] x1 = TestSupport.randomValues(11, 512);
    float[] x3 = TestSupport.randomValues(13, 3 * 512);
    try (Model model = Model.load(TestSupport.seedPrefix(), 0);
        Predictor reference = model.newPredictor()) {
      float[] y1 = reference.forward(x1, 1, 512);
      float[] y3 = reference.forward(x3, 3, 512);
      ExecutorService pool = Executors.newFixedThreadPool(8);
      CountDownLatch start = new CountDownLatch(1);
      try {
        List<Future<Integer>> results = new ArrayList<>();
        for (int t = 0; t < 8; ++t) {
          final boolean cloned = t % 2 == 0;
          Callable<Integer> work = () -> {
            try (Predictor p = cloned ? reference.clone() : model.newPredictor()) {
              start.await();
              float[] out1 = new float[2];
              for (int i = 0; i < 200; ++i) {
                p.forward(x1, new long[] {1, 512}, out1);
                assertArrayEquals(y1, out1, "batch 1, iteration " + i);
                if (i % 10 == 0) assertArrayEquals(y3, p.forward(x3, 3, 512), "batch 3");
              }
              return 200;
            }
          };
          results.add(pool.submit(work));
        }
        start.countDown();
        for (Future<Integer> f : results) f.get();
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /** Several threads sharing one predictor are serialized, not corrupted. */
  @Test
  void onePredictorSharedByThreadsIsSerialized() throws Exception {
    float[] x = TestSupport.randomValues(17, 512);
    try (Model model = Model.load(TestSupport.seedPrefix(), 0);
        Predictor p = model.newPredictor()) {
      float[] expected = p.forward(x, 1, 512);
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < 4; ++t) {
        threads.add(new Thread(() -> {
          try {
            for (int i = 0; i < 200; ++i) assertArrayEquals(expected, p.forward(x, 1, 512));
          } catch (Throwable e) {
            failures.add(e);
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) t.join();
      if (!failures.isEmpty()) throw new AssertionError(failures.get(0));
    }
  }
}
