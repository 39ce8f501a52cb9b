// The seed MLP (512-256-128-2) at batch 1 through the Java binding vs through the C API
// (bench/binding_bench_c.c). Target: Java <= C + 1 us per forward.
//
//   ninja -C build bench_java
//   java -cp hybridnet.jar:hybridnet-java-bench.jar JavaMlpBench PREFIX C_BENCH [REPEATS]
//
// Both sides run the same calls per forward (set the input from a copy, run, copy the output
// out) on one BLAS thread. The runs alternate C, Java, C, Java, ... so load from other processes
// hits both alike; the medians of all rounds are compared.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.hybridnet.Hybridnet;
import org.hybridnet.Model;
import org.hybridnet.NDArray;
import org.hybridnet.Predictor;

final class JavaMlpBench {
  private static final int ROUNDS = 3;
  private static final int FORWARDS = 2000;

  private JavaMlpBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: JavaMlpBench PREFIX C_BENCH [REPEATS]");
      System.exit(2);
    }
    String prefix = args[0];
    String cBench = args[1];
    int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    Hybridnet.setNumThreads(1);

    float[] x = new float[512];
    for (int i = 0; i < x.length; ++i) x[i] = (float) Math.sin(0.1 * i);
    long[] shape = {1, 512};
    float[] y = new float[2];
    FloatBuffer xb = ByteBuffer.allocateDirect(4 * 512).order(ByteOrder.nativeOrder()).asFloatBuffer();
    xb.put(x).flip();
    FloatBuffer yb = ByteBuffer.allocateDirect(4 * 2).order(ByteOrder.nativeOrder()).asFloatBuffer();

    List<Double> cRounds = new ArrayList<>();
    List<Double> javaRounds = new ArrayList<>();
    List<Double> bufferRounds = new ArrayList<>();
    List<Double> ndarrayRounds = new ArrayList<>();
    try (Model model = Model.load(prefix, 0);
        Predictor p = model.newPredictor();
        NDArray xa = NDArray.of(x, shape)) {
      // JIT warm-up of every path measured below.
      for (int i = 0; i < 30000; ++i) {
        p.forward(x, shape, y);
        if (i % 3 == 0) {
          p.setInput("data", xb, shape);
          p.forward();
          p.getOutput(0, yb);
          try (NDArray out = p.forward(xa)) {
            out.copyTo(y);
          }
        }
      }
      for (int rep = 0; rep < repeats; ++rep) {
        cRounds.addAll(runC(cBench, prefix));
        for (int r = 0; r < ROUNDS; ++r) {
          long t0 = System.nanoTime();
          for (int i = 0; i < FORWARDS; ++i) p.forward(x, shape, y);
          javaRounds.add((System.nanoTime() - t0) / 1e3 / FORWARDS);
        }
        for (int r = 0; r < ROUNDS; ++r) {
          long t0 = System.nanoTime();
          for (int i = 0; i < FORWARDS; ++i) {
            p.setInput("data", xb, shape);
            p.forward();
            p.getOutput(0, yb);
          }
          bufferRounds.add((System.nanoTime() - t0) / 1e3 / FORWARDS);
        }
        for (int r = 0; r < ROUNDS; ++r) {
          long t0 = System.nanoTime();
          for (int i = 0; i < FORWARDS; ++i) {
            try (NDArray out = p.forward(xa)) {
              out.copyTo(y);
            }
          }
          ndarrayRounds.add((System.nanoTime() - t0) / 1e3 / FORWARDS);
        }
      }
    }
    double c = median(cRounds);
    double java = median(javaRounds);
    System.out.printf(
        "seed MLP 512-256-128-2, batch 1, 1 BLAS thread; %d rounds of %d forwards per path,"
            + " C and Java alternating%n",
        javaRounds.size(), FORWARDS);
    System.out.printf("  %-46s %9s %9s %12s%n", "path", "median", "min", "median - C");
    row("C API: set_input + forward + get_output", cRounds, c);
    row("Java Predictor.forward(float[], shape, float[])", javaRounds, c);
    row("Java direct FloatBuffer setInput/getOutput", bufferRounds, c);
    row("Java NDArray in -> NDArray out (allocates)", ndarrayRounds, c);
    // Rounds of C and Java that ran back to back form pairs; the median of the pairwise
    // differences is the least sensitive to load from other processes drifting over time.
    List<Double> diffs = new ArrayList<>();
    for (int i = 0; i < Math.min(cRounds.size(), javaRounds.size()); ++i) {
      diffs.add(javaRounds.get(i) - cRounds.get(i));
    }
    double paired = median(diffs);
    System.out.printf("  Java float[] - C, median of back-to-back round pairs: %+.3f us%n", paired);
    System.out.printf("target Java <= C + 1 us at batch 1: %s (medians %+.3f us, paired %+.3f us)%n",
        java <= c + 1.0 && paired <= 1.0 ? "met" : "MISSED", java - c, paired);
  }

  private static void row(String name, List<Double> rounds, double c) {
    double m = median(rounds);
    System.out.printf("  %-46s %6.3f us %6.3f us %+9.3f us%n", name, m, Collections.min(rounds), m - c);
  }

  private static List<Double> runC(String exe, String prefix) throws Exception {
    Process proc = new ProcessBuilder(exe, prefix, Integer.toString(ROUNDS), Integer.toString(FORWARDS))
        .redirectErrorStream(true)
        .start();
    List<Double> rounds = new ArrayList<>();
    StringBuilder all = new StringBuilder();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        all.append(line).append('\n');
        if (line.startsWith("round_us=")) rounds.add(Double.parseDouble(line.substring(9)));
      }
    }
    if (proc.waitFor() != 0 || rounds.isEmpty()) {
      throw new IllegalStateException("the C benchmark failed:\n" + all);
    }
    return rounds;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }
}
