package org.hybridnet.spark

import java.nio.file.{Files, Path}

import org.apache.spark.ml.{Pipeline, PipelineModel, PipelineStage}
import org.apache.spark.ml.feature.SQLTransformer
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** MLWritable / MLReadable: the transformer and pipelines holding it save and load, and the
  * saved folder carries the model (the original files may go away).
  */
class PersistenceTest extends SparkTestBase {
  import TestSpark._

  private lazy val rows = randomRows(64, 512, seed = 11)
  private val schema = StructType(Seq(StructField("id", LongType, nullable = false),
    StructField("features", ArrayType(FloatType, containsNull = false))))
  private lazy val df = frame(rows.indices.map(i => Row(i.toLong, rows(i))), schema, partitions = 3)
  private lazy val expected =
    reference(seedMlp, Seq("data"), Seq(Seq(512L)), partitionIds(df), 5, id => Seq(rows(id.toInt)))

  private def deleteModel(prefix: String): Unit =
    Seq("-symbol.json", "-0000.params").foreach(s => Files.delete(Path.of(prefix + s)))

  test("a fitted pipeline saves and loads, params and model included") {
    val prefix = copyModel(seedMlp, "pipeline_mlp") // deleted after saving: the saved folder suffices
    val scorer = new HybridnetTransformer().setModel(prefix, 0).setInputCol("features").setInputShape(512)
      .setOutputCol("scores").setBatchSize(5).setHandleNull("error")
    val keep = new SQLTransformer().setStatement("SELECT id, scores FROM __THIS__")
    val fitted = new Pipeline().setStages(Array[PipelineStage](scorer, keep)).fit(df)
    val dir = workDir.resolve("saved_pipeline").toString
    fitted.write.overwrite().save(dir)
    deleteModel(prefix)
    assert(Files.isRegularFile(Path.of(dir, "stages", s"0_${scorer.uid}", "model", "model-0000.params")))

    val loaded = PipelineModel.load(dir)
    val stage = loaded.stages(0).asInstanceOf[HybridnetTransformer]
    assertEquals(stage.uid, scorer.uid)
    assertEquals(stage.getBatchSize, 5)
    assertEquals(stage.getHandleNull, "error")
    assertEquals(stage.getInputShapes.toSeq.map(_.toSeq), Seq(Seq(512)))
    assertBitEqual(outputsById(loaded.transform(df), "scores"), expected)
  }

  test("the transformer alone saves and loads; a model given as bytes too") {
    val json = Files.readAllBytes(Path.of(s"$seedMlp-symbol.json"))
    val params = Files.readAllBytes(Path.of(s"$seedMlp-0000.params"))
    val scorer = new HybridnetTransformer().setModelBytes(json, params).setInputCol("features").setInputShape(512)
      .setBatchSize(5).setOutputType("vector")
    val dir = workDir.resolve("saved_transformer").toString
    scorer.save(dir)
    val loaded = HybridnetTransformer.load(dir)
    assertEquals(loaded.getOutputType, "vector")
    assertBitEqual(outputsById(loaded.transform(df), "prediction"), expected)
    intercept[java.io.IOException](scorer.save(dir)) // exists; overwrite() replaces
    scorer.write.overwrite().save(dir)
  }

  test("copy keeps the params and the model") {
    val json = Files.readAllBytes(Path.of(s"$seedMlp-symbol.json"))
    val params = Files.readAllBytes(Path.of(s"$seedMlp-0000.params"))
    val scorer = new HybridnetTransformer().setModelBytes(json, params).setInputCol("features").setInputShape(512)
    val copied = scorer.copy(org.apache.spark.ml.param.ParamMap(scorer.batchSize -> 5))
    assertEquals(copied.getBatchSize, 5)
    assertBitEqual(outputsById(copied.transform(df), "prediction"), expected)
  }
}
