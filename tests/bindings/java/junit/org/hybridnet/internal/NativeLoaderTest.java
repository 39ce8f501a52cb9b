package org.hybridnet.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.hybridnet.Hybridnet;
import org.junit.jupiter.api.Test;

class NativeLoaderTest {
  @Test
  void loadsFromTheJarResourcesWithMatchingVersions() {
    assertEquals("the JAR", NativeLoader.source());
    assertEquals(HybridnetNativeConstants.HN_ABI_VERSION, Hybridnet.abiVersion());
    assertEquals(Hybridnet.bindingVersion(), Hybridnet.version());
    assertEquals("linux-x86_64", NativeLoader.platform());
    NativeLoader.load(); // idempotent
  }

  @Test
  void anAbiMismatchFailsWithAClearMessage() {
    int abi = HybridnetNativeConstants.HN_ABI_VERSION;
    assertDoesNotThrow(() -> NativeLoader.checkAbi(abi, "0.1.0"));
    UnsatisfiedLinkError e =
        assertThrows(UnsatisfiedLinkError.class, () -> NativeLoader.checkAbi(abi + 1, "9.0.0"));
    String msg = e.getMessage();
    assertTrue(msg.contains("version 9.0.0 with ABI " + (abi + 1)), msg);
    assertTrue(msg.contains("built for ABI " + abi), msg);
  }

  @Test
  void threadsAndSeed() {
    int n = Hybridnet.numThreads();
    Hybridnet.setNumThreads(1);
    assertEquals(1, Hybridnet.numThreads());
    Hybridnet.setNumThreads(n);
    Hybridnet.seed(3);
  }
}
