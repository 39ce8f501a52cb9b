// One training step of the seed MLP (512-256-128-2, ReLU; batch 64, SoftmaxCrossEntropyLoss,
// "sgd" learning_rate 0.01, hybridized, 1 thread) through the Scala facade vs through the C API
// (bench/binding_train_bench_c.c, the same calls per step). Target: Scala <= 1.05x C per step.
//
//   bench/scala/run.sh BUILD_DIR [REPEATS [WORK_DIR]]
//   java -cp <classpath> ScalaTrainBench C_BENCH [REPEATS]
//
// Per step both sides make the input and label arrays from host memory, record forward and
// loss, run backward, step the trainer and read the summed loss. The runs alternate C, Scala, C,
// Scala, ... so load from other processes hits both alike; the medians of all rounds are
// compared, as bench/java_train_bench.java does for Java.
import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.Locale

import scala.collection.mutable.ArrayBuffer
import scala.util.Using

import org.hybridnet.scalaapi._

object ScalaTrainBench {
  private val Batch = 64
  private val Inputs = 512
  private val Rounds = 3
  private val Steps = 200

  def main(args: Array[String]): Unit = {
    if (args.isEmpty) {
      System.err.println("usage: ScalaTrainBench C_BENCH [REPEATS]")
      sys.exit(2)
    }
    val cBench = args(0)
    val repeats = if (args.length > 1) args(1).toInt else 10
    Hybridnet.setNumThreads(1)

    val x = Array.tabulate(Batch * Inputs)(i => math.sin(0.1 * i).toFloat)
    val labels = Array.tabulate(Batch)(i => (i % 2).toFloat)
    val cRounds = ArrayBuffer.empty[Double]
    val scalaRounds = ArrayBuffer.empty[Double]
    var machine = ""
    Using.resources(
      HybridSequential(Dense(256, "relu", inUnits = 512), Dense(128, "relu", inUnits = 256),
        Dense(2, inUnits = 128)),
      Loss("SoftmaxCrossEntropyLoss")) { (net, lossFn) =>
      net.initialize("xavier", Some(42L))
      net.hybridize()
      Using.resource(Trainer(net, "sgd", "learning_rate" -> "0.01")) { trainer =>
        for (_ <- 0 until 3 * Steps) step(net, lossFn, trainer, x, labels) // JIT warm-up
        for (_ <- 0 until repeats) {
          machine = runC(cBench, cRounds)
          for (_ <- 0 until Rounds) {
            val t0 = System.nanoTime()
            for (_ <- 0 until Steps) step(net, lossFn, trainer, x, labels)
            scalaRounds += (System.nanoTime() - t0) / 1e3 / Steps
          }
        }
      }
    }
    val c = median(cRounds)
    val scala = median(scalaRounds)
    val paired = median(scalaRounds.zip(cRounds).map { case (s, cr) => s / cr })
    val byMinimums = scalaRounds.min / cRounds.min
    println(machine)
    println(f"seed MLP 512-256-128-2 training step, batch $Batch%d, 1 thread; " +
      f"${scalaRounds.size}%d rounds of $Steps%d steps per side, C and Scala alternating")
    println(String.format(Locale.ROOT, "  C API step:  median %.1f us, min %.1f us",
      Double.box(c), Double.box(cRounds.min)))
    println(String.format(Locale.ROOT, "  Scala step:  median %.1f us, min %.1f us",
      Double.box(scala), Double.box(scalaRounds.min)))
    println(String.format(Locale.ROOT,
      "  overhead: Scala / C = %.4f (medians), %.4f (median of back-to-back round pairs)," +
        " %.4f (minimums)", Double.box(scala / c), Double.box(paired), Double.box(byMinimums)))
    println("target Scala <= 1.05x C per step: " +
      (if (scala / c <= 1.05 && paired <= 1.05) "met" else "MISSED"))
  }

  /** The C benchmark's step (bench/binding_train_bench_c.c) through the Scala facade. */
  private def step(net: HybridSequential, lossFn: Loss, trainer: Trainer, x: Array[Float],
      labels: Array[Float]): Float =
    Using.resources(NDArray(x, Shape(Batch, Inputs)), NDArray(labels, Shape(Batch))) {
      (data, label) =>
        val (out, loss) = autograd.record {
          val out = net(data)
          (out, lossFn(out, label))
        }
        Using.resources(out, loss) { (_, l) =>
          l.backward()
          trainer.step(Batch)
          Using.resource(l.sum())(_.toFloat)
        }
    }

  /** Runs the C side for `Rounds` rounds, adds its per-step times; returns its machine lines. */
  private def runC(exe: String, rounds: ArrayBuffer[Double]): String = {
    val proc = new ProcessBuilder(exe, Rounds.toString, Steps.toString)
      .redirectErrorStream(true)
      .start()
    val machine = ArrayBuffer.empty[String]
    val all = new StringBuilder
    var found = 0
    Using.resource(new BufferedReader(
      new InputStreamReader(proc.getInputStream, StandardCharsets.UTF_8))) { reader =>
      Iterator.continually(reader.readLine()).takeWhile(_ != null).foreach { line =>
        all.append(line).append('\n')
        if (line.startsWith("cpu=") || line.startsWith("openblas=")) machine += line
        if (line.startsWith("round_us=")) {
          rounds += line.stripPrefix("round_us=").toDouble
          found += 1
        }
      }
    }
    if (proc.waitFor() != 0 || found == 0) {
      throw new IllegalStateException(s"the C benchmark failed:\n$all")
    }
    machine.mkString("\n")
  }

  private def median(values: collection.Seq[Double]): Double = {
    val sorted = values.sorted
    sorted(sorted.size / 2)
  }
}
