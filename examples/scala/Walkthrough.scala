// The seed walkthrough, short, in Scala: build the MLP with the DSL, run it eagerly, hybridize
// (the same output), time 1000 forwards before and after, export, load the export again.
//
//   java -cp <classpath> Walkthrough [--out DIR]
import java.nio.file.{Files, Path}

import scala.util.Using

import org.hybridnet.scalaapi._

object Walkthrough {
  private def mlp(): HybridSequential =
    HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2)).initialize()

  private def time1000(net: HybridSequential, x: NDArray): Double = {
    val start = System.nanoTime()
    for (_ <- 1 to 1000) net(x).close()
    (System.nanoTime() - start) / 1e9
  }

  def main(args: Array[String]): Unit = {
    val out = args match {
      case Array("--out", dir) => Path.of(dir)
      case Array()             => Path.of(".")
      case _ =>
        System.err.println("usage: Walkthrough [--out DIR]")
        sys.exit(2)
    }
    Files.createDirectories(out)
    Hybridnet.setNumThreads(1)
    Hybridnet.seed(1)
    val random = new scala.util.Random(1)
    val values = Array.fill(512)(random.nextGaussian().toFloat)

    val ok = Using.resources(mlp(), NDArray(values, Shape(1, 512))) { (net, x) =>
      println("== HybridSequential(Dense(256, \"relu\"), Dense(128, \"relu\"), Dense(2)), eager")
      val eager = Using.resource(net(x))(_.toSeq)
      println(net)
      println(s"output: ${eager.mkString(", ")}")

      println("== hybridized")
      net.hybridize()
      val hybrid = Using.resource(net(x))(_.toSeq)
      println(s"output: ${hybrid.mkString(", ")}")
      println(s"same output: ${if (hybrid == eager) "yes" else "NO"}")

      println("== 1000 forwards before and after hybridizing")
      val (before, after) = Using.resource(mlp()) { bench =>
        time1000(bench, x) // warm-up
        val b = time1000(bench, x)
        bench.hybridize()
        time1000(bench, x)
        (b, time1000(bench, x))
      }
      println(f"before: $before%.4f sec, after: $after%.4f sec, speed-up: ${before / after}%.2fx")

      println("== export, then load and run again")
      val prefix = out.resolve("scala_mlp").toString
      net.export(prefix)
      println(s"wrote $prefix-symbol.json and $prefix-0000.params")
      val loaded = Using.Manager { use =>
        val predictor = use(use(Model.load(prefix, 0)).predictor())
        predictor(values.toSeq, Shape(1, 512))
      }.get
      println(s"loaded output: ${loaded.mkString(", ")}")
      println(s"same output: ${if (loaded == eager) "yes" else "NO"}")
      hybrid == eager && loaded == eager
    }
    if (!ok) sys.exit(1)
  }
}
