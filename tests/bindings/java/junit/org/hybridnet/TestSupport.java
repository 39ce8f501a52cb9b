package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/** Shared fixtures: the C++ tools of the build, the C++ seed export, RSS. */
final class TestSupport {
  private static Path seedPrefix;

  private TestSupport() {}

  /** The CMake build's bin folder (-Dhybridnet.bin.dir, set by the pom). */
  static Path binDir() {
    String dir = System.getProperty("hybridnet.bin.dir");
    assertNotNull(dir, "-Dhybridnet.bin.dir is not set");
    return Path.of(dir);
  }

  /** Runs a command, fails the test unless it exits 0, returns its output. */
  static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + Arrays.toString(command));
    }
    String text = new String(out, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), () -> Arrays.toString(command) + " failed:\n" + text);
    return text;
  }

  /**
   * The seed MLP exported by the C++ walkthrough (examples/cpp/seed_walkthrough --out DIR), made
   * once per test JVM.
   */
  static synchronized Path seedPrefix() throws IOException, InterruptedException {
    if (seedPrefix == null) {
      Path dir = Files.createTempDirectory("hybridnet-seed-");
      run(binDir().resolve("seed_walkthrough").toString(), "--out", dir.toString());
      seedPrefix = dir.resolve("seed_mlp");
      deleteOnExit(dir);
    }
    return seedPrefix;
  }

  /** {@link #seedPrefix()} for lambdas (checked exceptions become errors). */
  static String seedPrefixUnchecked() {
    try {
      return seedPrefix().toString();
    } catch (IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** Runs an export with the C++ core (tests/bindings/java/hn_bindings_run.cc). */
  static void cppRun(Path prefix, Path input, Path output, boolean hybridize)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(
        binDir().resolve("hn_bindings_run").toString(), "run", prefix.toString(), "0",
        input.toString(), output.toString()));
    if (hybridize) cmd.add("--hybridize");
    run(cmd.toArray(new String[0]));
  }

  /** Runs an export with the hybridnet CLI ({@code hybridnet run}, a C++ program over the C API). */
  static void cliRun(Path prefix, Path input, Path output) throws IOException, InterruptedException {
    run(binDir().resolve("hybridnet").toString(), "run", prefix.toString(), "0",
        "--input", "data=" + input, "--output", output.toString());
  }

  /** Deterministic normal values. */
  static float[] randomValues(long seed, int n) {
    Random r = new Random(seed);
    float[] v = new float[n];
    for (int i = 0; i < n; ++i) v[i] = (float) r.nextGaussian();
    return v;
  }

  /** The resident set size of this process in kB (/proc/self/status VmRSS). */
  static long rssKb() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }
    throw new AssertionError("no VmRSS in /proc/self/status");
  }

  /** Collects garbage until the Cleaner has freed down to {@code target} live objects. */
  static long gcUntilLive(long target, long timeoutMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    long live = Hybridnet.liveObjects();
    while (live > target && System.currentTimeMillis() < deadline) {
      System.gc();
      Thread.sleep(20);
      live = Hybridnet.liveObjects();
    }
    return live;
  }

  private static void deleteOnExit(Path dir) {
    dir.toFile().deleteOnExit();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try (var files = Files.list(dir)) {
        files.forEach(f -> f.toFile().delete());
      } catch (IOException e) {
        // best effort
      }
      dir.toFile().delete();
    }));
  }
}
