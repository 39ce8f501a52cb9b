// The seed walkthrough ("Hybridize: faster and better") in Java, the twin of
// examples/cpp/seed_walkthrough.cc:
//   1. imperative vs symbolic programs,
//   2. an MLP 512 -> 256 -> 128 -> 2 run eagerly,
//   3. hybridized: the same output,
//   4. 1000 forwards before and after hybridizing (per-layer calls vs one cached graph),
//   5. the symbolic program,
//   6. export, then load (Model/Predictor and SymbolBlock) with the same output again.
// (The C++ walkthrough's print-once HybridNet needs forward code written in the host language;
// blocks with Java forward code are not offered by the Java binding.)
//
//   java -cp hybridnet.jar:hybridnet-examples.jar Walkthrough [--out DIR]
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.hybridnet.Dense;
import org.hybridnet.Hybridnet;
import org.hybridnet.HybridSequential;
import org.hybridnet.Model;
import org.hybridnet.NDArray;
import org.hybridnet.Op;
import org.hybridnet.Predictor;
import org.hybridnet.Symbol;
import org.hybridnet.SymbolBlock;

public final class Walkthrough {
  private Walkthrough() {}

  private static void step(String title) {
    System.out.println();
    System.out.println("== " + title);
  }

  private static HybridSequential getNet() {
    HybridSequential net =
        new HybridSequential().add(new Dense(256, "relu"), new Dense(128, "relu"), new Dense(2));
    net.initialize();
    return net;
  }

  private static double bench(HybridSequential net, NDArray x) {
    long start = System.nanoTime();
    for (int i = 0; i < 1000; ++i) {
      net.forward(x).close(); // the output is dropped, as in the C++ walkthrough
    }
    return (System.nanoTime() - start) / 1e9;
  }

  public static void main(String[] args) throws Exception {
    Path outDir = Path.of(".");
    if (args.length == 2 && args[0].equals("--out")) {
      outDir = Path.of(args[1]);
    } else if (args.length != 0) {
      System.err.println("usage: Walkthrough [--out DIR]");
      System.exit(2);
    }
    Files.createDirectories(outDir);
    Hybridnet.setNumThreads(1);
    Hybridnet.seed(1);
    System.out.println("hybridnet " + Hybridnet.version());

    step("1. Imperative vs symbolic: fancy_func(1, 2, 3, 4)");
    try (NDArray a = NDArray.of(new float[] {1});
        NDArray b = NDArray.of(new float[] {2});
        NDArray c = NDArray.of(new float[] {3});
        NDArray d = NDArray.of(new float[] {4});
        NDArray e = Op.invoke1("elemwise_add", Map.of(), a, b);
        NDArray f = Op.invoke1("elemwise_add", Map.of(), c, d);
        NDArray g = Op.invoke1("elemwise_add", Map.of(), e, f)) {
      System.out.println("imperative: each add runs now -> " + g.toFloatArray()[0]);
    }
    try (Symbol a = Symbol.var("a");
        Symbol b = Symbol.var("b");
        Symbol c = Symbol.var("c");
        Symbol d = Symbol.var("d");
        Symbol e = Symbol.create("elemwise_add", Map.of(), "e", a, b);
        Symbol f = Symbol.create("elemwise_add", Map.of(), "f", c, d);
        Symbol g = Symbol.create("elemwise_add", Map.of(), "g", e, f)) {
      System.out.println("symbolic: the program is built first: " + g.listArguments() + " -> "
          + g.listOutputs() + ", then compiled once and run");
    }

    step("2. HybridSequential MLP 512 -> 256 -> 128 -> 2, run eagerly");
    float[] values = new float[512];
    Random random = new Random(1);
    for (int i = 0; i < values.length; ++i) values[i] = (float) random.nextGaussian();
    try (NDArray x = NDArray.of(values, 1, 512);
        HybridSequential net = getNet()) {
      float[] eager;
      try (NDArray y = net.forward(x)) {
        System.out.println(net);
        System.out.println(y);
        eager = y.toFloatArray();
      }

      step("3. After hybridize(): the same output");
      net.hybridize();
      float[] hybrid;
      try (NDArray y = net.forward(x)) {
        System.out.println(y);
        hybrid = y.toFloatArray();
      }
      boolean same = Arrays.equals(eager, hybrid);
      System.out.println("bit-identical to eager: " + (same ? "yes" : "NO"));

      step("4. 1000 forwards before and after hybridizing");
      double before;
      double after;
      try (HybridSequential benchNet = getNet()) {
        bench(benchNet, x); // warm up the JIT and the allocator, as a long-running program would be
        before = bench(benchNet, x);
        benchNet.hybridize();
        bench(benchNet, x);
        after = bench(benchNet, x);
      }
      System.out.printf("before hybridizing: %.4f sec (one native call per layer and op)%n", before);
      System.out.printf("after hybridizing:  %.4f sec (one cached graph call)%n", after);
      System.out.printf("speed-up: %.2fx%n", before / after);

      step("5. The symbolic program (the MLP traced with a variable named data)");
      try (Symbol program = net.trace()) {
        System.out.println(program.toJson());
      }

      step("6. export, then load and run again");
      String prefix = outDir.resolve("java_mlp").toString();
      net.export(prefix);
      System.out.println("wrote " + prefix + "-symbol.json and " + prefix + "-0000.params");
      float[] loaded;
      try (Model model = Model.load(prefix, 0);
          Predictor predictor = model.newPredictor()) {
        loaded = predictor.forward(values, 1, 512);
      }
      System.out.println("Model + Predictor: " + Arrays.toString(loaded));
      boolean sameLoaded = Arrays.equals(eager, loaded);
      System.out.println("loaded output bit-identical: " + (sameLoaded ? "yes" : "NO"));
      boolean sameImported;
      try (SymbolBlock imported =
              SymbolBlock.imports(Path.of(prefix + "-symbol.json"), Path.of(prefix + "-0000.params"))) {
        imported.hybridize();
        try (NDArray y = imported.forward(x)) {
          sameImported = Arrays.equals(eager, y.toFloatArray());
        }
      }
      System.out.println("imported + hybridized bit-identical: " + (sameImported ? "yes" : "NO"));
      System.exit(same && sameLoaded && sameImported ? 0 : 1);
    }
  }
}
