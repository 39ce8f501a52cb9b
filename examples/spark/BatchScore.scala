// Batch scoring on Spark: reads a Parquet file of feature rows, appends the model's output as a
// column `prediction` (array<float>) and writes Parquet. The master comes from spark-submit or
// from -Dspark.master (local mode); bindings/spark/README.md shows both.
//
//   BatchScore INPUT.parquet OUTPUT.parquet MODEL_PREFIX EPOCH COLUMN SHAPE [BATCH_SIZE]
//   e.g. BatchScore features.parquet scored.parquet seed_mlp 0 features 512 256
//
// MODEL_PREFIX-symbol.json and MODEL_PREFIX-EEEE.params are read by the driver (a local path,
// or hdfs://, s3a://, ...) and broadcast to the executors; COLUMN holds array<float>,
// array<double>, ML Vectors or raw float32 bytes; SHAPE is one row's shape, e.g. 3,32,32.
import org.apache.spark.sql.SparkSession
import org.hybridnet.Hybridnet
import org.hybridnet.spark.HybridnetTransformer

object BatchScore {
  def main(args: Array[String]): Unit = args match {
    case Array(input, output, prefix, epoch, column, shape, rest @ _*) if rest.size <= 1 =>
      val spark = SparkSession.builder().appName("hybridnet BatchScore").getOrCreate()
      val scorer = new HybridnetTransformer()
        .setModel(prefix, epoch.toInt)
        .setInputCol(column)
        .setInputShape(shape.split(',').map(_.trim.toInt).toSeq: _*)
        .setOutputCol("prediction")
        .setBatchSize(rest.headOption.fold(64)(_.toInt))
      scorer.transform(spark.read.parquet(input)).write.mode("overwrite").parquet(output)
      val scored = spark.read.parquet(output)
      println(s"scored ${scored.count()} rows of $input into $output: ${scored.schema.simpleString}")
      println(s"hybridnet ${Hybridnet.version} (native library from ${Hybridnet.nativeSource})")
      scorer.release()
      spark.stop()
    case _ =>
      System.err.println("usage: BatchScore INPUT.parquet OUTPUT.parquet MODEL_PREFIX EPOCH COLUMN SHAPE [BATCH_SIZE]")
      sys.exit(2)
  }
}
