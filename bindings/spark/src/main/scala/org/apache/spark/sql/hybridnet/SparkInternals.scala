package org.apache.spark.sql.hybridnet

import org.apache.spark.SparkEnv
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Dataset, SparkSession, classic}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType
import org.apache.spark.storage.BroadcastBlockId

/** The few Spark internals hybridnet-spark uses, in one place (this package may see Spark's
  * `private[sql]` and `private[spark]` members).
  *
  * Why not only public API: a `Dataset[Row]` converts every `array<float>` element to a boxed
  * `java.lang.Float` and back, which costs more than the seed MLP's whole forward per row. Rows
  * are read and written as Spark's `InternalRow`s instead (arrays copied in bulk), as `Dataset.rdd`
  * itself does. Executors learn that a model's broadcast was destroyed from their block manager.
  */
object SparkInternals {
  /** The rows of `data` as Spark's internal rows (reused by the iterator: copy what you keep). */
  def internalRows(data: Dataset[_]): RDD[InternalRow] = classicDataset(data).queryExecution.toRdd

  /** A DataFrame over internal rows of `schema`. */
  def createDataFrame(session: SparkSession, rows: RDD[InternalRow], schema: StructType): DataFrame =
    classicSession(session).internalCreateDataFrame(rows, schema)

  /** Registers (or replaces) the temporary SQL function `name`, built from its arguments. */
  def registerFunction(session: SparkSession, name: String, builder: Seq[Expression] => Expression): Unit =
    classicSession(session).sessionState.functionRegistry.createOrReplaceTempFunction(name, builder, "scala_udf")

  /** True while this JVM's block manager holds broadcast `id` (false once it is destroyed or
    * unpersisted, or when no Spark runs in this JVM).
    */
  def broadcastAlive(id: Long): Boolean = {
    val env = SparkEnv.get
    env != null && env.blockManager.getStatus(BroadcastBlockId(id)).isDefined
  }

  private def classicSession(session: SparkSession): classic.SparkSession = session match {
    case s: classic.SparkSession => s
    case _ => throw new UnsupportedOperationException(
        "hybridnet: needs a classic SparkSession (Spark Connect clients cannot run JVM transformers)")
  }

  private def classicDataset(data: Dataset[_]): classic.Dataset[_] = data match {
    case d: classic.Dataset[_] => d
    case _ => throw new UnsupportedOperationException(
        "hybridnet: needs a Dataset of a classic SparkSession (not Spark Connect)")
  }
}
