// Writes a Parquet file of random feature rows to try BatchScore on: columns id (bigint) and
// features (array<float> of WIDTH values, standard normal, reproducible from SEED).
//
//   MakeFeatures OUTPUT.parquet ROWS WIDTH [SEED]
import scala.util.Random

import org.apache.spark.sql.SparkSession

object MakeFeatures {
  def main(args: Array[String]): Unit = args match {
    case Array(output, rows, width, rest @ _*) if rest.size <= 1 =>
      val spark = SparkSession.builder().appName("hybridnet MakeFeatures").getOrCreate()
      import spark.implicits._
      val (n, w, seed) = (rows.toInt, width.toInt, rest.headOption.fold(1L)(_.toLong))
      spark.range(n).map { id =>
        val random = new Random(seed * 1000003L + id)
        (id, Array.fill(w)(random.nextGaussian().toFloat))
      }.toDF("id", "features").write.mode("overwrite").parquet(output)
      println(s"wrote $n rows of $w features to $output")
      spark.stop()
    case _ =>
      System.err.println("usage: MakeFeatures OUTPUT.parquet ROWS WIDTH [SEED]")
      sys.exit(2)
  }
}
