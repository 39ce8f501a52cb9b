package org.hybridnet.spark

import java.nio.{ByteBuffer, ByteOrder}

import scala.util.Using

import org.apache.spark.ml.linalg.{SQLDataTypes, Vectors}
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.hybridnet.scalaapi.Symbol

/** The transformer in local[2]: outputs equal, bit for bit, to a plain Predictor fed the same
  * rows in the same batches, for every column type, batch size and model kind.
  */
class TransformerTest extends SparkTestBase {
  import TestSpark._

  private val n = 600
  private lazy val rows = randomRows(n, 512, seed = 1)
  private val features = StructType(Seq(StructField("id", LongType, nullable = false),
    StructField("features", ArrayType(FloatType, containsNull = false))))

  private def mlpReference(partitions: Seq[Seq[Long]], batchSize: Int) =
    reference(seedMlp, Seq("data"), Seq(Seq(512L)), partitions, batchSize, id => Seq(rows(id.toInt)))

  for (batchSize <- Seq(1, 7, 256)) {
    test(s"seed MLP, array<float>, 5 partitions on 2 cores, batch size $batchSize") {
      val df = frame(rows.indices.map(i => Row(i.toLong, rows(i))), features, partitions = 5)
      val scorer = new HybridnetTransformer().setModel(seedMlp, 0).setInputCol("features").setInputShape(512)
        .setOutputCol("prediction").setBatchSize(batchSize)
      val out = scorer.transform(df)
      assertEquals(out.schema("prediction").dataType, ArrayType(FloatType, containsNull = false))
      assertEquals(out.columns.toSeq, Seq("id", "features", "prediction"))
      val got = outputsById(out, "prediction")
      assertBitEqual(got, mlpReference(partitionIds(df), batchSize))
      assert(got.values.forall(_.length == 2))
    }
  }

  test("array<double>, dense and sparse ML Vectors, binary float32 and Vector output give the same numbers") {
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("doubles", ArrayType(DoubleType, containsNull = false)),
      StructField("vector", SQLDataTypes.VectorType),
      StructField("raw", BinaryType)))
    // Half the values of odd rows are zero, so their sparse vectors hold the same numbers.
    val values = rows.zipWithIndex.map { case (r, i) => if (i % 2 == 1) r.zipWithIndex.map { case (v, j) => if (j % 2 == 0) 0f else v } else r }
    val data = values.indices.map { i =>
      val v = values(i)
      val doubles = v.map(_.toDouble)
      val vector =
        if (i % 2 == 0) Vectors.dense(doubles)
        else Vectors.sparse(512, v.indices.filter(v(_) != 0f).toArray, v.filter(_ != 0f).map(_.toDouble))
      val raw = ByteBuffer.allocate(512 * 4).order(ByteOrder.LITTLE_ENDIAN)
      v.foreach(raw.putFloat)
      Row(i.toLong, doubles, vector, raw.array())
    }
    val df = frame(data, schema, partitions = 3)
    val expected = reference(seedMlp, Seq("data"), Seq(Seq(512L)), partitionIds(df), 64, id => Seq(values(id.toInt)))
    for (column <- Seq("doubles", "vector", "raw")) {
      val scorer = new HybridnetTransformer().setModel(seedMlp, 0).setInputCol(column).setInputShape(512)
      assertBitEqual(outputsById(scorer.transform(df), "prediction"), expected)
    }
    val asVectors = new HybridnetTransformer().setModel(seedMlp, 0).setInputCol("vector").setInputShape(512)
      .setOutputType("vector").transform(df)
    assertEquals(asVectors.schema("prediction").dataType, SQLDataTypes.VectorType)
    assertBitEqual(outputsById(asVectors, "prediction"), expected)
  }

  test("CIFAR ResNet-20 (MXNet's export) on 3x32x32 rows, batch size 7") {
    val images = randomRows(30, 3 * 32 * 32, seed = 2)
    val df = frame(images.indices.map(i => Row(i.toLong, images(i))), features, partitions = 3)
    val scorer = new HybridnetTransformer().setModel(resnet20, 0).setInputCol("features").setInputShape(3, 32, 32)
      .setOutputCol("scores").setBatchSize(7)
    val got = outputsById(scorer.transform(df), "scores")
    assert(got.values.forall(_.length == 10))
    assertBitEqual(got, reference(resnet20, Seq("data"), Seq(Seq(3L, 32L, 32L)), partitionIds(df), 7,
      id => Seq(images(id.toInt))))
  }

  test("a two-input model maps two columns (array<float> and Vector), in either order") {
    val a = randomRows(50, 3, seed = 3)
    val b = randomRows(50, 5, seed = 4)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("a", ArrayType(FloatType, containsNull = false)), StructField("b", SQLDataTypes.VectorType)))
    val df = frame(a.indices.map(i => Row(i.toLong, a(i), Vectors.dense(b(i).map(_.toDouble)))), schema, partitions = 4)
    val expected = reference(multiInput, Seq("a", "b"), Seq(Seq(3L), Seq(5L)), partitionIds(df), 8,
      id => Seq(a(id.toInt), b(id.toInt)))
    val inOrder = new HybridnetTransformer().setModel(multiInput, 0).setInputCols(Array("a", "b"))
      .setInputShapes(Array(Array(3), Array(5))).setBatchSize(8)
    assertBitEqual(outputsById(inOrder.transform(df), "prediction"), expected)
    val named = new HybridnetTransformer().setModel(multiInput, 0).setInputCols(Array("b", "a"))
      .setModelInputs(Array("b", "a")).setInputShapes(Array(Array(5), Array(3))).setBatchSize(8)
    assertBitEqual(outputsById(named.transform(df), "prediction"), expected)
  }

  test("null inputs give null outputs; the other rows are scored as usual") {
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("features", ArrayType(FloatType, containsNull = true))))
    val nulls = Set(0L, 5L, 6L, 40L)
    val withNulls = rows.take(50).indices.map { i =>
      if (i == 40) Row(i.toLong, rows(i).map(Float.box).updated(3, null).toSeq) // a null element
      else Row(i.toLong, if (nulls(i.toLong)) null else rows(i).toSeq)
    }
    val df = frame(withNulls, schema, partitions = 2)
    val got = outputsById(new HybridnetTransformer().setModel(seedMlp, 0).setInputCol("features").setInputShape(512)
      .setBatchSize(16).transform(df), "prediction")
    for (id <- nulls) assert(got(id) == null, s"row $id")
    // The reference feeds the same non-null rows in the same batches of 16 (nulls leave gaps).
    val batches = partitionIds(df).map(_.grouped(16).map(_.filterNot(nulls)).toSeq)
    val expected = batches.flatMap { part =>
      part.flatMap(batch => reference(seedMlp, Seq("data"), Seq(Seq(512L)), Seq(batch), batch.size, id => Seq(rows(id.toInt))))
    }.toMap
    assertBitEqual(got.filter { case (id, _) => !nulls(id) }, expected)
  }

  test("array<int> columns convert exactly to float32") {
    val a = randomRows(20, 3, seed = 5)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("a", ArrayType(FloatType, containsNull = false)), StructField("b", ArrayType(IntegerType, containsNull = false))))
    val ints = a.indices.map(i => Array.tabulate(5)(j => (i * 5 + j - 40) * 100003))
    val df = frame(a.indices.map(i => Row(i.toLong, a(i), ints(i).toSeq)), schema, partitions = 2)
    val expected = reference(multiInput, Seq("a", "b"), Seq(Seq(3L), Seq(5L)), partitionIds(df), 4,
      id => Seq(a(id.toInt), ints(id.toInt).map(_.toFloat)))
    val scorer = new HybridnetTransformer().setModel(multiInput, 0).setInputCols(Array("a", "b"))
      .setInputShapes(Array(Array(3), Array(5))).setBatchSize(4)
    assertBitEqual(outputsById(scorer.transform(df), "prediction"), expected)
  }

  test("one value per row from float, double, int and bigint columns; two outputs; a model given as bytes") {
    val x = randomRows(30, 3, seed = 6)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("x", ArrayType(FloatType, containsNull = false)), StructField("f", FloatType),
      StructField("d", DoubleType), StructField("i", IntegerType), StructField("l", LongType)))
    val df = frame(x.indices.map(i => Row(i.toLong, x(i), (i - 10).toFloat, (i - 10).toDouble, i - 10, (i - 10).toLong)),
      schema, partitions = 2)
    def expected(output: Int) = referenceOf(org.hybridnet.Model.fromBytes(scaleAndShift, Array.emptyByteArray),
      Seq("x", "s"), Seq(Seq(3L), Seq(1L)), partitionIds(df), 64, id => Seq(x(id.toInt), Array((id - 10).toFloat)), output)
    for (column <- Seq("f", "d", "i", "l")) {
      val scorer = new HybridnetTransformer().setModelBytes(scaleAndShift, Array.emptyByteArray)
        .setInputCols(Array("x", column)).setInputShapes(Array(Array(3), Array(1))).setOutputCols(Array("product", "sum"))
      val out = scorer.transform(df)
      assertBitEqual(outputsById(out, "product"), expected(0))
      assertBitEqual(outputsById(out, "sum"), expected(1))
    }
  }

  test("an input left unmapped is fed zeros, also by predictors that fed it for another transform") {
    // x * y and x + y; y's shape follows x's, so y may be left unset (zeros).
    val json = Using.Manager { use =>
      val x = use(Symbol.variable("x"))
      val y = use(Symbol.variable("y"))
      use(Symbol.group(use(Symbol("elemwise_mul")(x, y)), use(Symbol("elemwise_add")(x, y)))).toJson
    }.get.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    val x = randomRows(16, 3, seed = 8)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("x", ArrayType(FloatType, containsNull = false)), StructField("y", ArrayType(FloatType, containsNull = false))))
    val df = frame(x.indices.map(i => Row(i.toLong, x(i), Array(2f, 2f, 2f))), schema, partitions = 2)
    val both = new HybridnetTransformer().setModelBytes(json, Array.emptyByteArray)
      .setInputCols(Array("x", "y")).setInputShapes(Array(Array(3), Array(3))).setOutputCols(Array("product", "sum"))
    assertEquals(both.transform(df).count(), 16L) // its predictors now hold y = 2
    val xOnly = new HybridnetTransformer().setModelBytes(json, Array.emptyByteArray)
      .setInputCol("x").setInputShape(3).setOutputCols(Array("product", "sum"))
    val out = xOnly.transform(df)
    assertBitEqual(outputsById(out, "product"), x.indices.map(i => i.toLong -> x(i).map(_ * 0f)).toMap)
    assertBitEqual(outputsById(out, "sum"), x.indices.map(i => i.toLong -> x(i)).toMap)
    both.release()
  }

  test("in a spark.ml Pipeline with other stages") {
    import org.apache.spark.ml.{Pipeline, PipelineStage}
    import org.apache.spark.ml.feature.SQLTransformer
    val df = frame(rows.take(40).indices.map(i => Row(i.toLong, rows(i))), features, partitions = 2)
    val scorer = new HybridnetTransformer().setModel(seedMlp, 0).setInputCol("features").setInputShape(512)
    val firstScore = new SQLTransformer().setStatement("SELECT id, prediction[0] AS first FROM __THIS__")
    val model = new Pipeline().setStages(Array[PipelineStage](scorer, firstScore)).fit(df)
    val expected = reference(seedMlp, Seq("data"), Seq(Seq(512L)), partitionIds(df), 64, id => Seq(rows(id.toInt)))
    val got = model.transform(df).collect().map(r => r.getLong(0) -> Array(r.getFloat(1))).toMap
    assertBitEqual(got, expected.map { case (id, v) => id -> v.take(1) })
  }
}
