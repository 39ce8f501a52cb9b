package org.hybridnet.spark

import java.nio.file.{Files, Path}

import org.apache.spark.SparkException
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** Every error: a clear message naming the file, column or shape; model problems fail
  * `transform` itself on the driver (so no task ran), row problems fail the job.
  */
class ErrorsTest extends SparkTestBase {
  import TestSpark._

  private lazy val rows = randomRows(20, 512, seed = 9)
  private val schema = StructType(Seq(StructField("id", LongType, nullable = false),
    StructField("features", ArrayType(FloatType, containsNull = true))))
  private lazy val df = frame(rows.indices.map(i => Row(i.toLong, rows(i).toSeq)), schema, partitions = 2)

  private def scorer(prefix: String) =
    new HybridnetTransformer().setModel(prefix, 0).setInputCol("features").setInputShape(512)

  /** transform itself throws (it runs no job): the failure happens on the driver, before any task. */
  private def failsOnDriver(t: HybridnetTransformer): String =
    intercept[HybridnetSparkException](t.transform(df)).getMessage

  /** The job fails; the task's message is in the driver's exception. */
  private def failsInTask(body: => Any): String = {
    val e = intercept[SparkException](body)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")
  }

  test("a missing symbol file is named") {
    val message = failsOnDriver(scorer(workDir.resolve("no_such_model").toString))
    assert(message.contains("no_such_model-symbol.json does not exist"), message)
  }

  test("a missing params file is named") {
    val prefix = copyModel(seedMlp, "no_params")
    Files.delete(Path.of(s"$prefix-0000.params"))
    val message = failsOnDriver(scorer(prefix))
    assert(message.contains("no_params-0000.params does not exist"), message)
    val wrongEpoch = intercept[HybridnetSparkException](scorer(seedMlp).setModelEpoch(3).transform(df)).getMessage
    assert(wrongEpoch.contains("seed_mlp-0003.params does not exist"), wrongEpoch)
  }

  test("an unreadable params file (a directory) is named") {
    val prefix = copyModel(seedMlp, "unreadable")
    Files.delete(Path.of(s"$prefix-0000.params"))
    Files.createDirectory(Path.of(s"$prefix-0000.params"))
    val message = failsOnDriver(scorer(prefix))
    assert(message.contains("unreadable-0000.params is a directory"), message)
  }

  test("a malformed model names both files and the parser's complaint") {
    val prefix = copyModel(seedMlp, "malformed")
    Files.writeString(Path.of(s"$prefix-symbol.json"), """{"nodes": [ {"op": "null", """)
    val message = failsOnDriver(scorer(prefix))
    assert(message.contains("malformed-symbol.json + ") && message.contains("malformed-0000.params does not load"), message)
    val truncated = copyModel(seedMlp, "truncated")
    val params = Path.of(s"$truncated-0000.params")
    Files.write(params, Files.readAllBytes(params).take(1000))
    val truncatedMessage = failsOnDriver(scorer(truncated))
    assert(truncatedMessage.contains("truncated-0000.params does not load"), truncatedMessage)
  }

  test("a per-row shape the model rejects fails on the driver, naming input and shape") {
    val message = failsOnDriver(scorer(seedMlp).setInputShape(500))
    assert(message.contains("does not run on the per-row input shape(s) data: (500,)"), message)
  }

  test("a row of the wrong length names the column, its length and the expected shape") {
    val short = frame(Seq(Row(0L, rows(0).toSeq), Row(1L, rows(1).take(500).toSeq)), schema, partitions = 1)
    val message = failsInTask(scorer(seedMlp).transform(short).collect())
    assert(message.contains("column 'features': a row has 500 values, but the per-row input shape (512,) of model " +
      "input 'data' needs 512 values"), message)
    val binary = StructType(Seq(StructField("id", LongType), StructField("raw", BinaryType)))
    val odd = frame(Seq(Row(0L, new Array[Byte](2047))), binary, partitions = 1)
    val oddMessage = failsInTask(scorer(seedMlp).setInputCol("raw").transform(odd).collect())
    assert(oddMessage.contains("column 'raw': a row has 2047 bytes (not whole float32 values)"), oddMessage)
  }

  test("handleNull=error fails on a null row and on a null element") {
    val withNull = frame(Seq(Row(0L, rows(0).toSeq), Row(1L, null)), schema, partitions = 1)
    val message = failsInTask(scorer(seedMlp).setHandleNull("error").transform(withNull).collect())
    assert(message.contains("column 'features': a row is null or holds a null element (handleNull=error"), message)
    val nullElement = frame(Seq(Row(0L, rows(0).map(Float.box).updated(7, null).toSeq)), schema, partitions = 1)
    val elementMessage = failsInTask(scorer(seedMlp).setHandleNull("error").transform(nullElement).collect())
    assert(elementMessage.contains("column 'features': a row is null or holds a null element"), elementMessage)
  }

  test("integers beyond float32's exact range are refused, not rounded") {
    val ints = StructType(Seq(StructField("id", LongType), StructField("a", ArrayType(FloatType, containsNull = false)),
      StructField("b", ArrayType(LongType, containsNull = false))))
    val big = frame(Seq(Row(0L, Seq(1f, 2f, 3f), Seq(1L, 2L, (1L << 24) + 1, 4L, 5L))), ints, partitions = 1)
    val t = new HybridnetTransformer().setModel(multiInput, 0).setInputCols(Array("a", "b"))
      .setInputShapes(Array(Array(3), Array(5)))
    val message = failsInTask(t.transform(big).collect())
    assert(message.contains("column 'b': value 16777217 at index 2 is not exactly representable as float32"), message)
  }

  test("configuration errors: columns, types, shapes, names") {
    def rejects(t: HybridnetTransformer, expected: String): Unit = {
      val message = intercept[IllegalArgumentException](t.transform(df)).getMessage
      assert(message.contains(expected), message)
    }
    rejects(new HybridnetTransformer().setInputCol("features").setInputShape(512), "set the model")
    rejects(scorer(seedMlp).setInputCol("nope"), "no input column 'nope' among [id, features]")
    rejects(scorer(seedMlp).setInputCol("id"), "column 'id' holds one bigint per row, but its per-row shape (512,)")
    val text = frame(Seq(Row(0L, "x")), StructType(Seq(StructField("id", LongType), StructField("s", StringType))), 1)
    val message = intercept[IllegalArgumentException](scorer(seedMlp).setInputCol("s").transform(text)).getMessage
    assert(message.contains("column 's' has type string; a model input is read from array<float>"), message)
    rejects(new HybridnetTransformer().setModel(seedMlp, 0).setInputCol("features"), "set the per-row input shape")
    rejects(scorer(seedMlp).setOutputCol("id"), "output column 'id' already exists")
    rejects(scorer(seedMlp).setModelInputs(Array("x")), "the model has no input 'x'; its inputs are [data]")
    rejects(scorer(seedMlp).setModelOutputs(Array("y")), "the model has no output 'y'")
    rejects(scorer(seedMlp).setOutputCols(Array("a", "b")), "2 output columns for the model's 1 output(s)")
    val stream = spark.readStream.format("rate").load().selectExpr("value AS id", "array(CAST(value AS FLOAT)) AS features")
    val streaming = intercept[IllegalArgumentException](scorer(seedMlp).transform(stream)).getMessage
    assert(streaming.contains("for a stream, call it on each micro-batch (foreachBatch)"), streaming)
    intercept[IllegalArgumentException](scorer(seedMlp).setBatchSize(0))
    intercept[IllegalArgumentException](scorer(seedMlp).setHandleNull("skip"))
    intercept[IllegalArgumentException](scorer(seedMlp).setInputShape(3, 0))
  }
}
