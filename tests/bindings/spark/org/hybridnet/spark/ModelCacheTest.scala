package org.hybridnet.spark

import java.nio.file.{Files, Path}

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** The executor-side cache: one load per JVM whatever the partitions, stages and jobs, one
  * predictor per running task (reused by later tasks), released after the broadcast is destroyed.
  */
class ModelCacheTest extends SparkTestBase {
  import TestSpark._

  test("a model loads once across partitions, stages and jobs, and is released with its broadcast") {
    val prefix = exportMlp("cache_mlp", seed = 99) // bytes no other suite scores with
    val hash = ModelBytes(Files.readAllBytes(Path.of(s"$prefix-symbol.json")),
      Files.readAllBytes(Path.of(s"$prefix-0000.params")), "").contentHash
    val rows = randomRows(200, 512, seed = 31)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false),
      StructField("features", ArrayType(FloatType, containsNull = false))))
    val df = frame(rows.indices.map(i => Row(i.toLong, rows(i))), schema, partitions = 8)
    val loadsBefore = ModelCache.loads
    val predictorsBefore = ModelCache.predictorsCreated

    val scorer = new HybridnetTransformer().setModel(prefix, 0).setInputCol("features").setInputShape(512)
      .setBatchSize(16)
    val scored = scorer.transform(df)
    assertEquals(scored.count(), 200L)
    assertEquals(scored.collect().length, 200)
    // Scoring after a shuffle, then aggregating after it: three stages in one job.
    val shuffled = scorer.transform(df.repartition(5)).selectExpr("prediction[0] AS p").groupBy().count().collect()
    assertEquals(shuffled.head.getLong(0), 200L)

    assertEquals(ModelCache.loads - loadsBefore, 1L, "loads of this JVM")
    assert(ModelCache.loadedModels.contains(hash))
    val predictors = ModelCache.predictorsCreated - predictorsBefore
    assert(predictors >= 1 && predictors <= 2, s"$predictors predictors for 2 cores")

    scorer.release()
    val deadline = System.nanoTime() + 20L * 1000 * 1000 * 1000
    while (ModelCache.loadedModels.contains(hash) && System.nanoTime() < deadline) Thread.sleep(100)
    assert(!ModelCache.loadedModels.contains(hash), "the model is still loaded 20 s after its broadcast was destroyed")

    // The next transform reads, broadcasts and loads it again.
    assertEquals(scorer.transform(df).count(), 200L)
    assertEquals(ModelCache.loads - loadsBefore, 2L)
    scorer.release()
  }
}
