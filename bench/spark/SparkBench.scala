// Rows per second of HybridnetTransformer in Spark local[1] and local[2] against a plain
// single-JVM loop with one Predictor over the same rows, for the seed MLP and MXNet's CIFAR
// ResNet-20. Targets: local[1] >= 0.8x the plain loop, local[2] >= 1.6x local[1].
//
//   bench/spark/run.sh BUILD_DIR          (make bench runs it as build/bin/spark_bench)
//   java <spark options> -cp <classpath> SparkBench WORK_DIR RESNET20_PREFIX [REPEATS]
//
// Spark reads the rows from a cached DataFrame (8 partitions) and writes the scored rows to the
// `noop` sink, so every output is computed and materialised. The plain loop copies each row
// into a batch buffer and runs the allocation-free Predictor.forward. Both use one BLAS thread
// per task/loop and the same batch size. Each phase (one Spark master) alternates plain and
// Spark runs so load from other processes hits both alike; medians per phase, and local[2] vs
// local[1] is compared through each phase's own plain loop (ratio of ratios), which cancels a
// change of machine load between the phases. The local[2] phase also runs the plain loop on two
// threads (two predictors, half the batches each): what two cores give plain code at that moment,
// the ceiling for local[2]/local[1] on a machine shared with other work. "Spark without a model"
// (the same rows read and written to the same sink) bounds local[1]/plain from above: a row
// costs at least Spark's own handling plus the plain loop's forward, floor / (floor + plain).
import java.nio.file.{Files, Path}

import scala.util.{Random, Using}

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.storage.StorageLevel
import org.hybridnet.{Hybridnet, Model}
import org.hybridnet.scalaapi.{Dense, HybridSequential, NDArray, Shape}
import org.hybridnet.spark.HybridnetTransformer

object SparkBench {
  /** Partitions of the DataFrame; the row counts are whole batches per partition, so Spark and
    * the plain loop run the same batches.
    */
  val Partitions = 8

  final case class Case(name: String, prefix: String, rowShape: Seq[Int], rows: Int, batchSize: Int) {
    val rowSize: Int = rowShape.product
  }

  /** Row i's values: a generator of its own, so Spark tasks and the plain loop make the same rows. */
  def row(i: Int, size: Int): Array[Float] = {
    val r = new Random(1000003L * i + 17)
    Array.fill(size)(r.nextGaussian().toFloat)
  }

  def median(xs: Seq[Double]): Double = xs.sorted.apply(xs.size / 2)

  def seconds(body: => Unit): Double = {
    val start = System.nanoTime()
    body
    (System.nanoTime() - start) / 1e9
  }

  /** The plain loop: one predictor, the rows copied batch by batch, outputs copied out. */
  def plainLoop(c: Case, predictor: org.hybridnet.Predictor, rows: Array[Array[Float]]): Unit = {
    val full = new Array[Float](c.batchSize * c.rowSize)
    var out = new Array[Float](0)
    var start = 0
    while (start < rows.length) {
      val n = math.min(c.batchSize, rows.length - start)
      val batch = if (n == c.batchSize) full else new Array[Float](n * c.rowSize)
      for (r <- 0 until n) System.arraycopy(rows(start + r), 0, batch, r * c.rowSize, c.rowSize)
      val shape = (n.toLong +: c.rowShape.map(_.toLong)).toArray
      predictor.setInput("data", batch, shape: _*)
      predictor.forward()
      val size = predictor.outputShape(0).product.toInt
      if (out.length < size) out = new Array[Float](size)
      predictor.getOutput(0, out)
      start += n
    }
  }

  /** The plain loop on two threads, each with its own predictor and every other batch. */
  def plainLoopTwoThreads(c: Case, predictors: Seq[org.hybridnet.Predictor], rows: Array[Array[Float]]): Unit = {
    val batches = rows.grouped(c.batchSize).toArray
    val threads = predictors.zipWithIndex.map { case (predictor, t) =>
      new Thread(() => plainLoop(c, predictor, batches.indices.filter(_ % 2 == t).flatMap(batches(_)).toArray))
    }
    threads.foreach(_.start())
    threads.foreach(_.join())
  }

  def loadAverage: String = Files.readString(Path.of("/proc/loadavg")).split(" ").take(3).mkString(" ")

  def main(args: Array[String]): Unit = {
    if (args.length < 2) {
      System.err.println("usage: SparkBench WORK_DIR RESNET20_PREFIX [REPEATS]")
      sys.exit(2)
    }
    val work = Files.createDirectories(Path.of(args(0)))
    val repeats = if (args.length > 2) args(2).toInt else 5
    Hybridnet.setNumThreads(1)

    val mlp = work.resolve("seed_mlp").toString
    Using.resource(HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2))) { net =>
      net.initialize("uniform", Some(42L)).hybridize()
      Using.resource(NDArray(new Array[Float](512), Shape(1, 512)))(x => net(x).close())
      net.`export`(mlp)
    }
    val cases = Seq(
      Case("seed MLP 512-256-128-2", mlp, Seq(512), rows = Partitions * 256 * 40, batchSize = 256),
      Case("CIFAR ResNet-20 v1 (MXNet)", args(1), Seq(3, 32, 32), rows = Partitions * 64 * 2, batchSize = 64))

    val cpu = Using.resource(scala.io.Source.fromFile("/proc/cpuinfo"))(_.getLines().find(_.startsWith("model name"))
      .map(_.split(":", 2)(1).trim).getOrElse("?"))
    println(s"CPU: $cpu; ${Runtime.getRuntime.availableProcessors()} cores; OPENBLAS_CORETYPE=" +
      sys.env.getOrElse("OPENBLAS_CORETYPE", "(unset)") + "; OPENBLAS_NUM_THREADS=" +
      sys.env.getOrElse("OPENBLAS_NUM_THREADS", "(unset)") + s"; BLAS threads per loop/task: ${Hybridnet.numThreads()}")
    println(s"Spark ${org.apache.spark.SPARK_VERSION}, Java ${System.getProperty("java.version")}; " +
      s"medians of $repeats alternating runs per phase; $Partitions partitions")

    // results(case)(master) = (plain rows/s, spark rows/s, Spark without a model rows/s)
    val results = scala.collection.mutable.LinkedHashMap.empty[(String, String), (Double, Double, Double)]
    // twoThreads(case) = plain loop on two threads / on one, measured in the local[2] phase
    val twoThreads = scala.collection.mutable.Map.empty[String, Double]
    for (master <- Seq("local[1]", "local[2]")) {
      val spark = SparkSession.builder().master(master).appName("hybridnet-spark-bench")
        .config("spark.ui.enabled", "false").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1").getOrCreate()
      spark.sparkContext.setLogLevel("WARN")
      for (c <- cases) {
        val schema = StructType(Seq(StructField("id", LongType, nullable = false),
          StructField("features", ArrayType(FloatType, containsNull = false))))
        val size = c.rowSize
        val rdd = spark.sparkContext.parallelize(0 until c.rows, Partitions).map(i => Row(i.toLong, row(i, size)))
        val df = spark.createDataFrame(rdd, schema).persist(StorageLevel.MEMORY_ONLY)
        df.count()
        val rows = Array.tabulate(c.rows)(row(_, size))
        val scorer = new HybridnetTransformer().setModel(c.prefix, 0).setInputCol("features")
          .setInputShape(c.rowShape: _*).setBatchSize(c.batchSize)
        def sparkRun(): Unit = scorer.transform(df).write.format("noop").mode("overwrite").save()
        // Spark alone: the cached rows read and written to the same sink, without a model.
        def sparkFloor(): Unit = df.write.format("noop").mode("overwrite").save()
        val load0 = loadAverage
        val parallel = master == "local[2]"
        val (plain, viaSpark, floor, plain2) = Using.Manager { use =>
          val model = use(Model.load(c.prefix, 0))
          val predictor = use(model.newPredictor())
          val pair = Seq(predictor, use(model.newPredictor()))
          plainLoop(c, predictor, rows) // warm-up (JIT, plans)
          if (parallel) plainLoopTwoThreads(c, pair, rows)
          sparkRun()
          sparkFloor()
          val times = (1 to repeats).map(_ =>
            (seconds(plainLoop(c, predictor, rows)), seconds(sparkRun()), seconds(sparkFloor()),
              if (parallel) seconds(plainLoopTwoThreads(c, pair, rows)) else Double.NaN))
          (c.rows / median(times.map(_._1)), c.rows / median(times.map(_._2)), c.rows / median(times.map(_._3)),
            c.rows / median(times.map(_._4)))
        }.get
        if (parallel) twoThreads(c.name) = plain2 / plain
        results((c.name, master)) = (plain, viaSpark, floor)
        println(f"$master%-9s ${c.name}%-28s plain loop ${plain}%10.0f rows/s   Spark ${viaSpark}%10.0f rows/s   " +
          f"Spark/plain ${viaSpark / plain}%.2fx   Spark without a model ${floor}%10.0f rows/s   " +
          f"(load average $load0 -> $loadAverage)")
        scorer.release()
        df.unpersist()
      }
      spark.stop()
    }

    println()
    println("model                        local[1]/plain (target >= 0.8)   local[2]/local[1] (target >= 1.6)" +
      "   plain 2 threads/1 thread (the machine's ceiling now)   local[1]/plain bound (Spark's own row cost)")
    for (c <- cases) {
      val (plain1, spark1, floor1) = results((c.name, "local[1]"))
      val (plain2, spark2, _) = results((c.name, "local[2]"))
      val vsPlain = spark1 / plain1
      val scaling = (spark2 / plain2) / (spark1 / plain1)
      println(f"${c.name}%-28s $vsPlain%6.2fx ${if (vsPlain >= 0.8) "met" else "MISSED"}%-24s" +
        f" $scaling%6.2fx ${if (scaling >= 1.6) "met" else "MISSED"}%-6s (raw ${spark2 / spark1}%.2fx)       " +
        f"${twoThreads(c.name)}%6.2fx                                   ${floor1 / (floor1 + plain1)}%6.2fx")
    }
  }
}
