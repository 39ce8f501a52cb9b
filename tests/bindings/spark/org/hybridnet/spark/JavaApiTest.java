package org.hybridnet.spark;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.hybridnet.Dense;
import org.hybridnet.HybridSequential;
import org.hybridnet.Model;
import org.hybridnet.NDArray;
import org.hybridnet.Predictor;
import org.junit.Test;

/** The transformer, a pipeline and the SQL function used from Java. */
public class JavaApiTest {
  private static final int ROWS = 50;

  @Test
  public void transformerPipelineAndSqlFunctionFromJava() throws Exception {
    SparkSession spark =
        SparkSession.builder()
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .getOrCreate();
    Path dir = Files.createDirectories(Path.of(System.getProperty("hybridnet.test.dir") + "-java"));
    String prefix = dir.resolve("java_mlp").toString();
    try (HybridSequential net =
            new HybridSequential().add(new Dense(16, "relu"), new Dense(3));
        NDArray x = NDArray.zeros(1, 8)) {
      net.initialize("uniform", 5L, false);
      net.hybridize();
      net.forward(x).close();
      net.export(prefix);
    }

    Random random = new Random(3);
    float[][] features = new float[ROWS][8];
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < ROWS; ++i) {
      for (int j = 0; j < 8; ++j) features[i][j] = (float) random.nextGaussian();
      rows.add(RowFactory.create((long) i, features[i]));
    }
    StructType schema =
        new StructType()
            .add("id", DataTypes.LongType, false)
            .add("features", DataTypes.createArrayType(DataTypes.FloatType, false));
    Dataset<Row> df =
        spark.createDataFrame(new JavaSparkContext(spark.sparkContext()).parallelize(rows, 1), schema);

    // One partition, batches of 20: the reference feeds the same batches.
    float[][] expected = new float[ROWS][];
    try (Model model = Model.load(prefix, 0);
        Predictor predictor = model.newPredictor()) {
      for (int start = 0; start < ROWS; start += 20) {
        int n = Math.min(20, ROWS - start);
        float[] batch = new float[n * 8];
        for (int r = 0; r < n; ++r) System.arraycopy(features[start + r], 0, batch, r * 8, 8);
        float[] out = predictor.forward(batch, n, 8);
        for (int r = 0; r < n; ++r) expected[start + r] = java.util.Arrays.copyOfRange(out, r * 3, r * 3 + 3);
      }
    }

    HybridnetTransformer scorer =
        new HybridnetTransformer()
            .setModel(prefix, 0)
            .setInputCol("features")
            .setInputShape(8)
            .setOutputCol("scores")
            .setBatchSize(20);
    PipelineModel fitted = new Pipeline().setStages(new PipelineStage[] {scorer}).fit(df);
    for (Row row : fitted.transform(df).select("id", "scores").collectAsList()) {
      List<Float> scores = row.getList(1);
      float[] got = new float[scores.size()];
      for (int k = 0; k < got.length; ++k) got[k] = scores.get(k);
      assertArrayEquals(expected[(int) row.getLong(0)], got, 0f);
    }

    HybridnetSql.register(spark, "score_java", scorer);
    df.createOrReplaceTempView("java_rows");
    List<Row> sql = spark.sql("SELECT id, score_java(features) FROM java_rows").collectAsList();
    assertEquals(ROWS, sql.size());
    for (Row row : sql) assertEquals(3, row.getList(1).size());
    scorer.release();
  }
}
