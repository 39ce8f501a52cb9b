// Trains the digits LeNet of examples/python/train_digits.py through the Scala API, as every
// language's digits example does (the digits training protocol), and reports its accuracy.
//
//   java -cp <classpath> TrainDigits DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd]
//       [--no-shuffle] [--out PREFIX] [--min-accuracy A]
//
// DATA_DIR is written by `train_digits.py --write-data DATA_DIR`. Prints "epoch E: loss L" per
// epoch (E from 1; L: the sum of the steps' summed losses over the number of training samples; a
// run stopped by --steps ends with its partial epoch) and "test accuracy A". With --out:
// PREFIX-losses.txt (each step's loss as the hex bits of a float32), PREFIX.params and the export
// PREFIX.
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.Locale

import scala.util.Using

import org.hybridnet.scalaapi._

object TrainDigits {
  private final case class Options(
      dataDir: Path = null,
      epochs: Int = 10,
      steps: Long = -1,
      optimizer: String = "adam",
      shuffle: Boolean = true,
      out: Option[String] = None,
      minAccuracy: Double = -1)

  private def usage(problem: String): Nothing = {
    System.err.println(s"TrainDigits: $problem")
    System.err.println("usage: TrainDigits DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd]"
      + " [--no-shuffle] [--out PREFIX] [--min-accuracy A]")
    sys.exit(2)
  }

  private def parse(args: List[String], o: Options = Options()): Options = {
    def number[T](flag: String, value: String, read: String => T): T =
      try read(value)
      catch { case _: NumberFormatException => usage(s"$flag takes a number, got '$value'") }
    args match {
      case Nil =>
        if (o.dataDir == null) usage("DATA_DIR is missing")
        if (o.epochs < 1 || o.steps == 0 || o.steps < -1) usage("--epochs and --steps must be >= 1")
        o
      case "--epochs" :: v :: rest => parse(rest, o.copy(epochs = number("--epochs", v, _.toInt)))
      case "--steps" :: v :: rest  => parse(rest, o.copy(steps = number("--steps", v, _.toLong)))
      case "--optimizer" :: v :: rest =>
        if (v != "adam" && v != "sgd") usage(s"--optimizer takes adam or sgd, got '$v'")
        parse(rest, o.copy(optimizer = v))
      case "--no-shuffle" :: rest  => parse(rest, o.copy(shuffle = false))
      case "--out" :: v :: rest    => parse(rest, o.copy(out = Some(v)))
      case "--min-accuracy" :: v :: rest =>
        parse(rest, o.copy(minAccuracy = number("--min-accuracy", v, _.toDouble)))
      case flag :: Nil if flag.startsWith("--") => usage(s"$flag needs a value")
      case dir :: rest if !dir.startsWith("--") && o.dataDir == null =>
        parse(rest, o.copy(dataDir = Path.of(dir)))
      case other :: _ => usage(s"unexpected '$other'")
    }
  }

  /** Conv(32) - pool - Conv(64) - pool - flatten - Dense(128, relu) - Dense(10). */
  private def lenet(): HybridSequential = {
    def conv(channels: Int) = Layer("Conv2D", "channels" -> channels.toString, "kernel_size" -> "3",
      "padding" -> "1", "activation" -> "relu")
    HybridSequential(conv(32), Layer("MaxPool2D", "pool_size" -> "2"), conv(64),
      Layer("MaxPool2D", "pool_size" -> "2"), Flatten(), Dense(128, "relu"), Dense(10))
  }

  def main(args: Array[String]): Unit = {
    val o = parse(args.toList)
    val status =
      try run(o)
      catch {
        case e: HybridnetException =>
          System.err.println(s"TrainDigits: ${e.getMessage}")
          1
      }
    sys.exit(status)
  }

  private def run(o: Options): Int = {
    def load(name: String) = NDArray.load(o.dataDir.resolve(name))
    Using.resources(load("digits_train_images.npy"), load("digits_train_labels.npy"),
        load("digits_test_images.npy"), load("digits_test_labels.npy")) {
      (trainX, trainY, testX, testY) =>
        Using.resources(lenet(), Loss("SoftmaxCrossEntropyLoss")) { (net, lossFn) =>
          train(o, trainX, trainY, testX, testY, net, lossFn)
        }
    }
  }

  private def train(o: Options, trainX: NDArray, trainY: NDArray, testX: NDArray, testY: NDArray,
      net: HybridSequential, lossFn: Loss): Int = {
    // Initialized and run once so the deferred shapes resolve; then the shared initial values.
    net.initialize()
    net.hybridize()
    Using.resource(NDArray.zeros(Shape(1, 1, 8, 8)))(zeros => net(zeros).close())
    net.loadParameters(o.dataDir.resolve("lenet_init.params"))
    val numSamples = trainX.shape(0)
    val hyper =
      if (o.optimizer == "sgd") Seq("learning_rate" -> "0.1", "momentum" -> "0.9")
      else Seq("learning_rate" -> "0.002")
    val losses = new StringBuilder
    Using.resources(Trainer(net, o.optimizer, hyper: _*),
        DataLoader(Seq(trainX, trainY), 32, o.shuffle, "keep", 42)) { (trainer, loader) =>
      var step = 0L
      var epoch = 1
      while (if (o.steps >= 0) step < o.steps else epoch <= o.epochs) {
        var epochLoss = 0.0
        val batches = loader.iterator
        while (batches.hasNext && (o.steps < 0 || step < o.steps)) {
          val batch = batches.next()
          try {
            val stepLoss = trainStep(net, lossFn, trainer, batch(0), batch(1))
            epochLoss += stepLoss
            losses.append(f"${java.lang.Float.floatToRawIntBits(stepLoss)}%08x\n")
          } finally batch.foreach(_.close())
          step += 1
        }
        println("epoch %d: loss %.6f".formatLocal(Locale.ROOT, epoch, epochLoss / numSamples))
        epoch += 1
      }
    }
    val accuracy = testAccuracy(net, testX, testY)
    println("test accuracy %.4f".formatLocal(Locale.ROOT, accuracy))
    o.out.foreach { prefix =>
      Files.writeString(Path.of(s"$prefix-losses.txt"), losses, StandardCharsets.US_ASCII)
      net.saveParameters(Path.of(s"$prefix.params"))
      net.export(prefix)
    }
    if (accuracy < o.minAccuracy) {
      System.err.println("TrainDigits: test accuracy %.4f is below %.4f"
        .formatLocal(Locale.ROOT, accuracy, o.minAccuracy))
      1
    } else 0
  }

  /** One recorded forward, backward and update; returns the batch's summed loss. */
  private def trainStep(net: HybridSequential, lossFn: Loss, trainer: Trainer, x: NDArray,
      y: NDArray): Float = {
    val loss = autograd.record { Using.resource(net(x))(out => lossFn(out, y)) }
    Using.resource(loss) { l =>
      l.backward()
      trainer.step(x.shape(0).toInt)
      Using.resource(l.sum())(_.toFloat)
    }
  }

  /** The "acc" metric over the test set, in batches of 100 in order. */
  private def testAccuracy(net: HybridSequential, testX: NDArray, testY: NDArray): Double =
    Using.resources(Metric("acc"), DataLoader(Seq(testX, testY), 100)) { (acc, test) =>
      for (batch <- test) {
        try Using.resource(net(batch(0)))(pred => acc.update(batch(1), pred))
        finally batch.foreach(_.close())
      }
      acc.value
    }
}
