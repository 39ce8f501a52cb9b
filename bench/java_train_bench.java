// One training step of the seed MLP (512-256-128-2, ReLU; batch 64, SoftmaxCrossEntropyLoss,
// "sgd" learning_rate 0.01, hybridized, 1 thread) through the Java binding vs through the C API
// (bench/binding_train_bench_c.c, the same calls per step). Target: Java <= 1.05x C per step.
//
//   ninja -C build bench_java_train
//   java -cp hybridnet.jar:hybridnet-java-bench.jar JavaTrainBench C_BENCH [REPEATS]
//
// Per step both sides make the input and label arrays from host memory, record forward and
// loss, run backward, step the trainer and read the summed loss. The runs alternate C, Java, C,
// Java, ... so load from other processes hits both alike; the medians of all rounds are compared.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.hybridnet.Autograd;
import org.hybridnet.Dense;
import org.hybridnet.HybridSequential;
import org.hybridnet.Hybridnet;
import org.hybridnet.Loss;
import org.hybridnet.NDArray;
import org.hybridnet.Trainer;

final class JavaTrainBench {
  private static final int BATCH = 64;
  private static final int INPUTS = 512;
  private static final int ROUNDS = 3;
  private static final int STEPS = 200;

  private JavaTrainBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: JavaTrainBench C_BENCH [REPEATS]");
      System.exit(2);
    }
    String cBench = args[0];
    int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    Hybridnet.setNumThreads(1);

    float[] x = new float[BATCH * INPUTS];
    for (int i = 0; i < x.length; ++i) x[i] = (float) Math.sin(0.1 * i);
    float[] labels = new float[BATCH];
    for (int i = 0; i < BATCH; ++i) labels[i] = i % 2;

    List<Double> cRounds = new ArrayList<>();
    List<Double> javaRounds = new ArrayList<>();
    String cpu = "";
    try (HybridSequential net = new HybridSequential()
            .add(new Dense(256, "relu", Map.of("in_units", "512")),
                new Dense(128, "relu", Map.of("in_units", "256")),
                new Dense(2, null, Map.of("in_units", "128")));
        Loss lossFn = new Loss("SoftmaxCrossEntropyLoss");
        Trainer trainer = new Trainer(net, "sgd", Map.of("learning_rate", "0.01"))) {
      net.initialize("xavier", 42);
      net.hybridize();
      for (int i = 0; i < 3 * STEPS; ++i) step(net, lossFn, trainer, x, labels); // JIT warm-up
      for (int rep = 0; rep < repeats; ++rep) {
        cpu = runC(cBench, cRounds);
        for (int r = 0; r < ROUNDS; ++r) {
          long t0 = System.nanoTime();
          for (int i = 0; i < STEPS; ++i) step(net, lossFn, trainer, x, labels);
          javaRounds.add((System.nanoTime() - t0) / 1e3 / STEPS);
        }
      }
    }
    double c = median(cRounds);
    double java = median(javaRounds);
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < Math.min(cRounds.size(), javaRounds.size()); ++i) {
      ratios.add(javaRounds.get(i) / cRounds.get(i));
    }
    double paired = median(ratios);
    System.out.println(cpu);
    System.out.printf(
        "seed MLP 512-256-128-2 training step, batch %d, 1 thread; %d rounds of %d steps per side,"
            + " C and Java alternating%n",
        BATCH, javaRounds.size(), STEPS);
    System.out.printf("  C API step:  median %.1f us, min %.1f us%n", c, Collections.min(cRounds));
    System.out.printf(
        "  Java step:   median %.1f us, min %.1f us%n", java, Collections.min(javaRounds));
    System.out.printf(
        "  overhead: Java / C = %.4f (medians), %.4f (median of back-to-back round pairs),"
            + " %.4f (minimums)%n",
        java / c, paired, Collections.min(javaRounds) / Collections.min(cRounds));
    System.out.printf("target Java <= 1.05x C per step: %s%n",
        java / c <= 1.05 && paired <= 1.05 ? "met" : "MISSED");
  }

  /** The C benchmark's step (bench/binding_train_bench_c.c) through the Java API. */
  @SuppressWarnings("try") // the recording scope is opened for its close()
  private static float step(
      HybridSequential net, Loss lossFn, Trainer trainer, float[] x, float[] labels) {
    try (NDArray data = NDArray.of(x, BATCH, INPUTS);
        NDArray label = NDArray.of(labels, BATCH)) {
      NDArray out;
      NDArray loss;
      try (Autograd.Scope s = Autograd.record()) {
        out = net.forward(data);
        loss = lossFn.forward(out, label);
      }
      try (NDArray o = out;
          NDArray l = loss) {
        l.backward();
        trainer.step(BATCH);
        try (NDArray sum = l.sum()) {
          return sum.toFloat();
        }
      }
    }
  }

  /** Runs the C side for ROUNDS rounds, adds its per-step times; returns its machine lines. */
  private static String runC(String exe, List<Double> rounds) throws Exception {
    Process proc = new ProcessBuilder(exe, Integer.toString(ROUNDS), Integer.toString(STEPS))
        .redirectErrorStream(true)
        .start();
    String cpu = "";
    int found = 0;
    StringBuilder all = new StringBuilder();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        all.append(line).append('\n');
        if (line.startsWith("cpu=") || line.startsWith("openblas=")) {
          cpu = cpu.isEmpty() ? line : cpu + "\n" + line;
        }
        if (line.startsWith("round_us=")) {
          rounds.add(Double.parseDouble(line.substring(9)));
          ++found;
        }
      }
    }
    if (proc.waitFor() != 0 || found == 0) {
      throw new IllegalStateException("the C benchmark failed:\n" + all);
    }
    return cpu;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }
}
