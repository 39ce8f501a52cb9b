package org.hybridnet

import org.apache.spark.sql.SparkSession

/** Batch inference on Apache Spark: [[spark.HybridnetTransformer]] (a Spark ML Transformer,
  * batched) and [[spark.HybridnetSql]] (a SQL function).
  *
  * {{{
  * import org.hybridnet
  * hybridnet.spark.register(spark, "score", new HybridnetTransformer().setModel("my_mlp", 0).setInputShape(512))
  * spark.sql("SELECT score(features) FROM t")
  * }}}
  */
package object spark {
  /** Registers the SQL function `name` scoring with `model` (see [[HybridnetSql.register]]). */
  def register(session: SparkSession, name: String, model: HybridnetTransformer): Unit =
    HybridnetSql.register(session, name, model)
}
