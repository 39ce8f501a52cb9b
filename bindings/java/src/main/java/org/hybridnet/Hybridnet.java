package org.hybridnet;

import java.util.concurrent.atomic.AtomicLong;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;
import org.hybridnet.internal.NativeLoader;

/**
 * Library-wide settings and facts: versions, BLAS threads, the random seed.
 *
 * <p>{@code java -jar hybridnet.jar} (or {@code java -cp hybridnet.jar org.hybridnet.Hybridnet})
 * prints the versions and where the native library was loaded from.
 */
public final class Hybridnet {
  static {
    NativeLoader.load();
  }

  private static final AtomicLong SEEDS = new AtomicLong(0x5eed);

  private Hybridnet() {}

  /**
   * The native library's version, e.g. "0.1.0".
   *
   * @return the version string
   */
  public static String version() {
    return HybridnetNative.hn_version();
  }

  /**
   * The version of the C header this binding was generated from.
   *
   * @return the header's version string
   */
  public static String bindingVersion() {
    return HybridnetNativeConstants.HN_VERSION_STRING;
  }

  /**
   * The native library's ABI generation (the SONAME's major number).
   *
   * @return the ABI generation
   */
  public static int abiVersion() {
    return HybridnetNative.hn_abi_version();
  }

  /**
   * Sets the number of threads of the BLAS kernels (process-wide; 1 is fastest at batch 1).
   *
   * @param numThreads the thread count, at least 1
   */
  public static void setNumThreads(int numThreads) {
    HybridnetNative.hn_set_num_threads(numThreads);
  }

  /**
   * The number of threads of the BLAS kernels.
   *
   * @return the thread count
   */
  public static int numThreads() {
    int[] n = new int[1];
    HybridnetNative.hn_get_num_threads(n);
    return n[0];
  }

  /**
   * Seeds the native random generator, and the sequence of seeds {@link Block#initialize()} uses,
   * so a program that seeds first gets the same weights on every run.
   *
   * @param seed the seed
   */
  public static void seed(long seed) {
    HybridnetNative.hn_seed(seed);
    SEEDS.set(seed);
  }

  /** The next seed for an initialization without an explicit seed (SplitMix64 sequence). */
  static long nextSeed() {
    long z = SEEDS.addAndGet(0x9E3779B97F4A7C15L);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * Native objects created through this binding and not yet freed (by close() or by the
   * Cleaner). A debugging aid for leak checks.
   *
   * @return the number of live native objects of this binding
   */
  public static long liveObjects() {
    return NativeResource.liveObjects();
  }

  /**
   * Native handles alive in this process ({@code hn_debug_live_handles}): those of this binding
   * and of any other user of the C library. A debugging aid for leak checks: note it before a
   * workload, close (or collect) what it made, compare.
   *
   * @return the number of live native handles of the process
   */
  public static long nativeLiveHandles() {
    long[] count = new long[1];
    HybridnetNative.hn_debug_live_handles(count);
    return count[0];
  }

  /**
   * Where the native libraries were loaded from.
   *
   * @return the location of the loaded libraries
   */
  public static String nativeSource() {
    return NativeLoader.source();
  }

  /**
   * Prints the versions and the native library's origin.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    System.out.println(
        "hybridnet "
            + version()
            + " (ABI "
            + abiVersion()
            + ", binding "
            + bindingVersion()
            + ", native library from "
            + nativeSource()
            + ")");
  }
}
