// Trains the digits LeNet of examples/python/train_digits.py through the C ABI, as every
// language's digits example does (the digits training protocol), and reports its accuracy.
//
//   java -cp hybridnet.jar:hybridnet-examples.jar TrainDigits DATA_DIR [--epochs N] [--steps N]
//       [--optimizer adam|sgd] [--no-shuffle] [--out PREFIX] [--min-accuracy A]
//
// DATA_DIR is written by `train_digits.py --write-data DATA_DIR`: the 8x8 digits as .npy files
// and the initial parameters lenet_init.params. Prints "epoch E: loss L" per epoch (E from 1; L:
// the sum of the steps' summed losses over the number of training samples; a run stopped by
// --steps ends with its partial epoch) and "test accuracy A". With --out: PREFIX-losses.txt (each
// step's loss as the hex bits of a float32), PREFIX.params (save_parameters) and the export
// PREFIX.
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.hybridnet.Autograd;
import org.hybridnet.DataLoader;
import org.hybridnet.Dense;
import org.hybridnet.Flatten;
import org.hybridnet.HybridSequential;
import org.hybridnet.HybridnetException;
import org.hybridnet.Layer;
import org.hybridnet.Loss;
import org.hybridnet.Metric;
import org.hybridnet.NDArray;
import org.hybridnet.Trainer;

public final class TrainDigits {
  private static final int BATCH_SIZE = 32;
  private static final int TEST_BATCH_SIZE = 100;
  private static final long SHUFFLE_SEED = 42;

  private TrainDigits() {}

  /** The command line. */
  private static final class Options {
    Path dataDir;
    int epochs = 10;
    long steps = -1;
    String optimizer = "adam";
    boolean shuffle = true;
    String out;
    double minAccuracy = -1;
  }

  public static void main(String[] args) throws IOException {
    Options o = parse(args);
    try {
      System.exit(train(o));
    } catch (HybridnetException e) {
      System.err.println("TrainDigits: " + e.getMessage());
      System.exit(1);
    }
  }

  private static int train(Options o) throws IOException {
    try (NDArray trainX = NDArray.load(o.dataDir.resolve("digits_train_images.npy"));
        NDArray trainY = NDArray.load(o.dataDir.resolve("digits_train_labels.npy"));
        NDArray testX = NDArray.load(o.dataDir.resolve("digits_test_images.npy"));
        NDArray testY = NDArray.load(o.dataDir.resolve("digits_test_labels.npy"));
        HybridSequential net = lenet();
        Loss lossFn = new Loss("SoftmaxCrossEntropyLoss");
        DataLoader loader =
            new DataLoader(
                new NDArray[] {trainX, trainY}, BATCH_SIZE, o.shuffle, "keep", SHUFFLE_SEED)) {
      // Initialized and run once so the deferred shapes resolve; then the shared initial values.
      net.initialize();
      net.hybridize();
      try (NDArray zeros = NDArray.zeros(1, 1, 8, 8)) {
        net.forward(zeros).close();
      }
      net.loadParameters(o.dataDir.resolve("lenet_init.params"));
      long numSamples = trainX.shape()[0];
      Map<String, String> hyper =
          o.optimizer.equals("sgd")
              ? Map.of("learning_rate", "0.1", "momentum", "0.9")
              : Map.of("learning_rate", "0.002");
      StringBuilder losses = new StringBuilder();
      try (Trainer trainer = new Trainer(net, o.optimizer, hyper)) {
        long step = 0;
        for (int epoch = 1; o.steps >= 0 ? step < o.steps : epoch <= o.epochs; ++epoch) {
          double epochLoss = 0;
          for (NDArray[] batch : loader) {
            try (NDArray x = batch[0];
                NDArray y = batch[1]) {
              float stepLoss = trainStep(net, lossFn, trainer, x, y);
              epochLoss += stepLoss;
              losses.append(String.format("%08x\n", Float.floatToRawIntBits(stepLoss)));
            }
            if (o.steps >= 0 && ++step >= o.steps) break;
          }
          System.out.printf(Locale.ROOT, "epoch %d: loss %.6f%n", epoch, epochLoss / numSamples);
        }
      }
      double accuracy = accuracy(net, testX, testY);
      System.out.printf(Locale.ROOT, "test accuracy %.4f%n", accuracy);
      if (o.out != null) {
        Files.writeString(Path.of(o.out + "-losses.txt"), losses, StandardCharsets.US_ASCII);
        net.saveParameters(Path.of(o.out + ".params"));
        net.export(o.out, 0);
      }
      if (accuracy < o.minAccuracy) {
        System.err.printf(
            Locale.ROOT,
            "TrainDigits: test accuracy %.4f is below %.4f%n",
            accuracy,
            o.minAccuracy);
        return 1;
      }
      return 0;
    }
  }

  /** Conv(32) - pool - Conv(64) - pool - flatten - Dense(128, relu) - Dense(10). */
  private static HybridSequential lenet() {
    return new HybridSequential()
        .add(
            new Layer(
                "Conv2D",
                Map.of("channels", "32", "kernel_size", "3", "padding", "1", "activation", "relu")),
            new Layer("MaxPool2D", Map.of("pool_size", "2")),
            new Layer(
                "Conv2D",
                Map.of("channels", "64", "kernel_size", "3", "padding", "1", "activation", "relu")),
            new Layer("MaxPool2D", Map.of("pool_size", "2")),
            new Flatten(),
            new Dense(128, "relu"),
            new Dense(10));
  }

  /** One recorded forward, backward and update; returns the batch's summed loss. */
  @SuppressWarnings("try") // the scope is used for its close(), not referenced in the body
  private static float trainStep(
      HybridSequential net, Loss lossFn, Trainer trainer, NDArray x, NDArray y) {
    NDArray loss;
    try (Autograd.Scope recording = Autograd.record();
        NDArray out = net.forward(x)) {
      loss = lossFn.forward(out, y);
    }
    try (NDArray l = loss;
        NDArray sum = l.sum()) {
      l.backward();
      trainer.step(Math.toIntExact(x.shape()[0]));
      return sum.toFloat();
    }
  }

  /** The "acc" metric over the test set, in batches of 100 in order. */
  private static double accuracy(HybridSequential net, NDArray testX, NDArray testY) {
    try (Metric acc = new Metric("acc");
        DataLoader test = new DataLoader(new NDArray[] {testX, testY}, TEST_BATCH_SIZE)) {
      for (NDArray[] batch : test) {
        try (NDArray x = batch[0];
            NDArray y = batch[1];
            NDArray pred = net.forward(x)) {
          acc.update(y, pred);
        }
      }
      return acc.value();
    }
  }

  private static Options parse(String[] args) {
    Options o = new Options();
    try {
      for (int i = 0; i < args.length; ++i) {
        switch (args[i]) {
          case "--epochs":
            o.epochs = Integer.parseInt(args[++i]);
            break;
          case "--steps":
            o.steps = Long.parseLong(args[++i]);
            break;
          case "--optimizer":
            o.optimizer = args[++i];
            if (!o.optimizer.equals("adam") && !o.optimizer.equals("sgd")) {
              usage("--optimizer takes adam or sgd, got '" + o.optimizer + "'");
            }
            break;
          case "--no-shuffle":
            o.shuffle = false;
            break;
          case "--out":
            o.out = args[++i];
            break;
          case "--min-accuracy":
            o.minAccuracy = Double.parseDouble(args[++i]);
            break;
          default:
            if (args[i].startsWith("--") || o.dataDir != null) {
              usage("unexpected '" + args[i] + "'");
            }
            o.dataDir = Path.of(args[i]);
        }
      }
    } catch (ArrayIndexOutOfBoundsException e) {
      usage(args[args.length - 1] + " needs a value");
    } catch (NumberFormatException e) {
      usage("not a number: " + e.getMessage());
    }
    if (o.dataDir == null) usage("DATA_DIR is missing");
    if (o.epochs < 1 || o.steps == 0 || o.steps < -1) usage("--epochs and --steps must be >= 1");
    return o;
  }

  private static void usage(String problem) {
    System.err.println("TrainDigits: " + problem);
    System.err.println(
        "usage: TrainDigits DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd]"
            + " [--no-shuffle] [--out PREFIX] [--min-accuracy A]");
    System.exit(2);
  }
}
