package org.hybridnet.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.hybridnet

/** `hybridnet.spark.register(spark, "score", model)` then `SELECT score(features) FROM t`:
  * one forward per row (batch 1), equal to a plain Predictor at batch 1.
  */
class SqlFunctionTest extends SparkTestBase {
  import TestSpark._

  private lazy val rows = randomRows(40, 512, seed = 21)
  private val schema = StructType(Seq(StructField("id", LongType, nullable = false),
    StructField("features", ArrayType(FloatType, containsNull = false))))
  private val nulls = Set(3L, 17L)

  private def rowsWithNulls = rows.indices.map(i => Row(i.toLong, if (nulls(i.toLong)) null else rows(i).toSeq))

  private lazy val expected =
    reference(seedMlp, Seq("data"), Seq(Seq(512L)), Seq(rows.indices.map(_.toLong).filterNot(nulls)), 1,
      id => Seq(rows(id.toInt)))

  test("SELECT score(features) FROM t scores each row; null rows give null") {
    frame(rowsWithNulls, schema, partitions = 3).createOrReplaceTempView("mlp_rows")
    hybridnet.spark.register(spark, "score", new HybridnetTransformer().setModel(seedMlp, 0).setInputShape(512))
    val out = spark.sql("SELECT id, score(features) AS prediction FROM mlp_rows")
    assertEquals(out.schema("prediction").dataType, ArrayType(FloatType, containsNull = false))
    val got = outputsById(out, "prediction")
    for (id <- nulls) assert(got(id) == null, s"row $id")
    assertBitEqual(got.filter { case (id, _) => !nulls(id) }, expected)
  }

  test("evaluated on the driver too (Spark folds a local relation there)") {
    spark.createDataFrame(rowsWithNulls.asJava, schema).createOrReplaceTempView("local_rows")
    HybridnetSql.register(spark, "score_local", new HybridnetTransformer().setModel(seedMlp, 0).setInputShape(512))
    val got = outputsById(spark.sql("SELECT id, score_local(features) AS p FROM local_rows"), "p")
    assertBitEqual(got.filter { case (id, _) => !nulls(id) }, expected)
  }

  test("several model inputs are arguments; several outputs are a struct") {
    val x = randomRows(12, 3, seed = 22)
    val xs = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("x", ArrayType(FloatType, containsNull = false)), StructField("s", DoubleType)))
    frame(x.indices.map(i => Row(i.toLong, x(i), i * 0.5)), xs, partitions = 2).createOrReplaceTempView("xs")
    HybridnetSql.register(spark, "scale_shift", new HybridnetTransformer().setModelBytes(scaleAndShift, Array.emptyByteArray)
      .setInputShapes(Array(Array(3), Array(1))).setOutputCols(Array("product", "sum")))
    val out = spark.sql("SELECT id, scale_shift(x, s) AS r FROM xs")
    assertEquals(out.schema("r").dataType.asInstanceOf[StructType].fieldNames.toSeq, Seq("product", "sum"))
    val flat = out.selectExpr("id", "r.product AS product", "r.sum AS sum")
    for ((column, output) <- Seq("product" -> 0, "sum" -> 1)) {
      val want = referenceOf(org.hybridnet.Model.fromBytes(scaleAndShift, Array.emptyByteArray), Seq("x", "s"),
        Seq(Seq(3L), Seq(1L)), Seq(x.indices.map(_.toLong)), 1, id => Seq(x(id.toInt), Array(id * 0.5f)), output)
      assertBitEqual(outputsById(flat, column), want)
    }
  }

  test("wrong argument count or type is an analysis error naming the function") {
    frame(rowsWithNulls, schema, partitions = 1).createOrReplaceTempView("mlp_rows2")
    hybridnet.spark.register(spark, "score2", new HybridnetTransformer().setModel(seedMlp, 0).setInputShape(512))
    val arity = intercept[Exception](spark.sql("SELECT score2(features, id) FROM mlp_rows2").collect())
    assert(arity.getMessage.contains("score2 takes 1 argument(s), one per model input (data), not 2"), arity.getMessage)
    val kind = intercept[Exception](spark.sql("SELECT score2(CAST(id AS STRING)) FROM mlp_rows2").collect())
    assert(kind.getMessage.contains("has type string; a model input is read from"), kind.getMessage)
  }
}
