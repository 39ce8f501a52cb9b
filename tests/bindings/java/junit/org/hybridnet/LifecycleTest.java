package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
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
    long nativeBefore = Hybridnet.nativeLiveHandles();
    // Held until the checks below (a GC during the loop could otherwise free some already),
    // then forgotten without close().
    List<NDArray> forgotten = new ArrayList<>();
    for (int i = 0; i < 20_000; ++i) forgotten.add(NDArray.of(new float[64], 64));
    assertTrue(Hybridnet.liveObjects() >= before + 20_000, "all are alive while referenced");
    assertTrue(Hybridnet.nativeLiveHandles() >= nativeBefore + 20_000, "and so are their handles");
    forgotten = null;
    long after = TestSupport.gcUntilLive(before, 20_000);
    assertTrue(after <= before, "the Cleaner freed them: live " + after + ", before " + before);
    assertEquals(nativeBefore, Hybridnet.nativeLiveHandles(), "the native handles are freed");
  }

  // Create/close cycles and close() racing forward() on many threads: SoakTest.
}
