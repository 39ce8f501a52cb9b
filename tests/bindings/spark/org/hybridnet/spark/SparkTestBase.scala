package org.hybridnet.spark

import java.nio.file.{Files, Path}
import java.util.Comparator

import scala.concurrent.duration.Duration
import scala.util.{Random, Using}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.StructType
import org.hybridnet.{Hybridnet, Model}
import org.hybridnet.scalaapi.{Dense, HybridSequential, NDArray, Shape, Symbol}

/** One SparkSession in local[2] mode for every suite of the JVM, and the models they score with. */
object TestSpark {
  lazy val session: SparkSession = {
    Hybridnet.setNumThreads(1) // the references below run with the executors' setting
    SparkSession.builder()
      .master("local[2]")
      .appName("hybridnet-spark-tests")
      .config("spark.ui.enabled", "false")
      .config("spark.driver.bindAddress", "127.0.0.1")
      .config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.task.maxFailures", "1")
      // Broadcasts go through Kryo here (clusters often use it); the examples use Java serialization.
      .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
      .getOrCreate()
  }

  /** A fresh folder for this JVM's files (Maven passes -Dhybridnet.test.dir). */
  lazy val workDir: Path = {
    val dir = Path.of(sys.props.getOrElse("hybridnet.test.dir", sys.error("-Dhybridnet.test.dir is not set")))
    deleteTree(dir)
    Files.createDirectories(dir)
  }

  def deleteTree(dir: Path): Unit =
    if (Files.exists(dir)) {
      Using.resource(Files.walk(dir))(_.sorted(Comparator.reverseOrder[Path]()).forEach(p => Files.delete(p)))
    }

  /** The seed MLP (512 -> 256 relu -> 128 relu -> 2), exported with `seed` as the demo does. */
  def exportMlp(name: String, seed: Long): String = {
    val prefix = workDir.resolve(name).toString
    Using.resource(HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2))) { net =>
      net.initialize("uniform", Some(seed)).hybridize()
      Using.resource(NDArray(new Array[Float](512), Shape(1, 512)))(x => net(x).close())
      net.`export`(prefix)
    }
    prefix
  }

  lazy val seedMlp: String = exportMlp("seed_mlp", 42)

  /** A copy of the model files of `prefix` (epoch 0) under `name`, to break or delete. */
  def copyModel(prefix: String, name: String): String = {
    val copy = workDir.resolve(name).toString
    for (suffix <- Seq("-symbol.json", "-0000.params")) Files.copy(Path.of(prefix + suffix), Path.of(copy + suffix))
    copy
  }

  /** MXNet's CIFAR ResNet-20 v1 (tests/data/mxnet), 3x32x32 in, 10 scores out. */
  lazy val resnet20: String = {
    val dir = Path.of(sys.props.getOrElse("hybridnet.fixtures.dir", sys.error("-Dhybridnet.fixtures.dir is not set")))
    val prefix = dir.resolve("cifar_resnet20_v1")
    for (f <- Seq("cifar_resnet20_v1-symbol.json", "cifar_resnet20_v1-0000.params")) {
      assert(Files.isRegularFile(dir.resolve(f)), s"missing fixture ${dir.resolve(f)}")
    }
    prefix.toString
  }

  /** Two inputs, a (3 per row) and b (5 per row), concatenated, then a Dense of 4 units. */
  lazy val multiInput: String = {
    val dense = workDir.resolve("dense8").toString
    Using.resource(HybridSequential(Dense(4, inUnits = 8))) { net =>
      net.initialize("uniform", Some(7)).hybridize()
      Using.resource(NDArray(new Array[Float](8), Shape(1, 8)))(x => net(x).close())
      net.`export`(dense)
    }
    val weights = Using.resource(Model.load(dense, 0))(m =>
      Using.resource(m.symbol())(s => (s.listArguments().toArray(new Array[String](0)).toSeq diff m.inputNames().toArray.toSeq)))
    val weight = weights.find(_.endsWith("weight")).getOrElse(sys.error(s"no weight among $weights"))
    val bias = weights.find(_.endsWith("bias")).getOrElse(sys.error(s"no bias among $weights"))
    val prefix = workDir.resolve("two_inputs").toString
    val json = Using.Manager { use =>
      val a = use(Symbol.variable("a"))
      val b = use(Symbol.variable("b"))
      val joined = use(Symbol("Concat", "dim" -> "1", "num_args" -> "2")(a, b))
      val fc = use(Symbol.create("FullyConnected", "fc", "num_hidden" -> "4")(
        joined, use(Symbol.variable(weight)), use(Symbol.variable(bias))))
      fc.toJson
    }.get
    Files.writeString(Path.of(s"$prefix-symbol.json"), json)
    Files.copy(Path.of(s"$dense-0000.params"), Path.of(s"$prefix-0000.params"))
    prefix
  }

  /** A graph without parameters, inputs x (3 per row) and s (1 per row), outputs x * s and x + s. */
  lazy val scaleAndShift: Array[Byte] = Using.Manager { use =>
    val x = use(Symbol.variable("x"))
    val s = use(Symbol.variable("s"))
    use(Symbol.group(use(Symbol("broadcast_mul")(x, s)), use(Symbol("broadcast_add")(x, s)))).toJson
  }.get.getBytes(java.nio.charset.StandardCharsets.UTF_8)

  def randomRows(n: Int, width: Int, seed: Long): IndexedSeq[Array[Float]] = {
    val r = new Random(seed)
    IndexedSeq.fill(n)(Array.fill(width)(r.nextGaussian().toFloat))
  }

  /** `rows` (one Row per element, with the given schema) in `partitions` partitions. */
  def frame(rows: Seq[Row], schema: StructType, partitions: Int): DataFrame =
    session.createDataFrame(session.sparkContext.parallelize(rows, partitions), schema)

  /** The ids of each partition of `df` (column "id"), in order. */
  def partitionIds(df: DataFrame): Seq[Seq[Long]] =
    df.select("id").rdd.glom().collect().toSeq.map(_.toSeq.map(_.getLong(0)))

  /** The single-process reference: a plain Predictor on the same rows in the same batches
    * (each partition's rows, `batchSize` at a time). inputs(id) holds one array per model input.
    */
  def reference(prefix: String, inputNames: Seq[String], rowShapes: Seq[Seq[Long]],
                partitions: Seq[Seq[Long]], batchSize: Int, inputs: Long => Seq[Array[Float]]): Map[Long, Array[Float]] =
    referenceOf(Model.load(prefix, 0), inputNames, rowShapes, partitions, batchSize, inputs)

  def referenceOf(load: => Model, inputNames: Seq[String], rowShapes: Seq[Seq[Long]],
                  partitions: Seq[Seq[Long]], batchSize: Int, inputs: Long => Seq[Array[Float]],
                  output: Int = 0): Map[Long, Array[Float]] =
    Using.Manager { use =>
      val model = use(load)
      val predictor = use(model.newPredictor())
      (for (part <- partitions; batch <- part.grouped(batchSize)) yield {
        for (((name, shape), i) <- inputNames.zip(rowShapes).zipWithIndex) {
          predictor.setInput(name, batch.flatMap(id => inputs(id)(i)).toArray, (batch.size.toLong +: shape): _*)
        }
        predictor.forward()
        val out = new Array[Float](predictor.outputShape(output).product.toInt)
        predictor.getOutput(output, out)
        val perRow = out.length / batch.size
        batch.zipWithIndex.map { case (id, r) => id -> out.slice(r * perRow, (r + 1) * perRow) }
      }).flatten.toMap
    }.get

  /** Column `column` of `df` by id, as floats (arrays or vectors). */
  def outputsById(df: DataFrame, column: String): Map[Long, Array[Float]] =
    df.select("id", column).collect().map { row =>
      val value: Array[Float] = row.get(1) match {
        case null => null
        case v: org.apache.spark.ml.linalg.Vector => v.toArray.map(_.toFloat)
        case s: scala.collection.Seq[_] => s.map(_.asInstanceOf[Float]).toArray
        case other => sys.error(s"unexpected output $other")
      }
      row.getLong(0) -> value
    }.toMap

  def bits(values: Array[Float]): Seq[Int] = values.toSeq.map(java.lang.Float.floatToRawIntBits)
}

/** Suites share TestSpark's session; they check outputs bit for bit. */
abstract class SparkTestBase extends munit.FunSuite {
  // Starting Spark and the first jobs (JIT, code generation) take long on a loaded machine.
  override val munitTimeout: Duration = Duration(10, "min")

  override def beforeAll(): Unit = { TestSpark.session; () }

  protected def spark: SparkSession = TestSpark.session

  protected def assertBitEqual(actual: Map[Long, Array[Float]], expected: Map[Long, Array[Float]])(implicit
      loc: munit.Location): Unit = {
    assertEquals(actual.keySet, expected.keySet)
    for ((id, want) <- expected) {
      assert(actual(id) != null, s"row $id has a null output")
      assertEquals(TestSpark.bits(actual(id)), TestSpark.bits(want), s"row $id")
    }
  }
}
