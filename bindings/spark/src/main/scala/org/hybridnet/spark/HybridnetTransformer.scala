package org.hybridnet.spark

import scala.annotation.varargs
import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.Using

import org.apache.hadoop.fs.Path
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.ml.Transformer
import org.apache.spark.ml.linalg.SQLDataTypes
import org.apache.spark.ml.param._
import org.apache.spark.ml.util._
import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.hybridnet.SparkInternals
import org.apache.spark.sql.types.{ArrayType, DataType, FloatType, StructField, StructType}
import org.hybridnet.{HybridnetException, Model}

/** Scores a DataFrame with a hybridnet (or Apache MXNet) export: appends the model's outputs as
  * columns. A Spark ML `Transformer`, so it works from Scala, Java and in `spark.ml` Pipelines,
  * and saves and loads with them (the model files are saved inside the pipeline's folder).
  *
  * {{{
  * val scorer = new HybridnetTransformer()
  *   .setModel("hdfs:///models/resnet20", 0)       // or setModelBytes(json, params)
  *   .setInputCol("image").setInputShape(3, 32, 32)  // array<float>, array<double>, Vector, binary
  *   .setOutputCol("scores")                         // array<float> (or setOutputType("vector"))
  *   .setBatchSize(64)
  * val scored = scorer.transform(images)
  * }}}
  *
  * How it runs: `transform` reads the two files on the driver (a missing, unreadable or malformed
  * model fails here, naming the file, before any task runs), checks the model runs on the per-row
  * shapes, and broadcasts the bytes once. Each executor JVM loads the model once ([[ModelCache]]:
  * JVM-wide, keyed by content hash, across partitions, stages and jobs) and each task uses its
  * own predictor, feeding the partition's rows `batchSize` at a time (the last batch smaller).
  *
  * Nulls: a row whose input is null (or holds a null element) gets null outputs; with
  * `setHandleNull("error")` it fails the job instead. A row of the wrong length fails the job
  * naming the column, the row's length and the expected shape.
  *
  * [[release]] destroys the broadcast: executors free the model (and its predictors) within
  * about a second, and DataFrames returned by earlier `transform` calls cannot run any more.
  */
class HybridnetTransformer(override val uid: String) extends Transformer with DefaultParamsWritable {

  /** A transformer with a fresh uid ("hybridnet_..."). */
  def this() = this(Identifiable.randomUID("hybridnet"))

  /** @group param */
  final val modelPrefix: Param[String] = new Param[String](this, "modelPrefix",
    "the model's files PREFIX-symbol.json and PREFIX-EEEE.params (a Hadoop path: file:, hdfs:, s3a:, ...)")

  /** @group param */
  final val modelEpoch: IntParam = new IntParam(this, "modelEpoch", "the EEEE of PREFIX-EEEE.params",
    ParamValidators.gtEq(0))

  /** @group param */
  final val inputCols: StringArrayParam = new StringArrayParam(this, "inputCols",
    "the columns feeding the model's inputs")

  /** @group param */
  final val modelInputs: StringArrayParam = new StringArrayParam(this, "modelInputs",
    "the model input each input column feeds (default: the model's inputs in order)")

  /** @group param */
  final val inputShapes: StringArrayParam = new StringArrayParam(this, "inputShapes",
    "the shape of one row's value of each input column, e.g. '3,32,32' ('' for one value per row)",
    (shapes: Array[String]) => shapes.forall(Shapes.valid))

  /** @group param */
  final val outputCols: StringArrayParam = new StringArrayParam(this, "outputCols",
    "the columns receiving the model's outputs")

  /** @group param */
  final val modelOutputs: StringArrayParam = new StringArrayParam(this, "modelOutputs",
    "the model output each output column receives (default: the model's outputs in order)")

  /** @group param */
  final val outputType: Param[String] = new Param[String](this, "outputType",
    "the output columns' type: 'array' (array<float>) or 'vector' (ML Vector)",
    ParamValidators.inArray(Array("array", "vector")))

  /** @group param */
  final val batchSize: IntParam = new IntParam(this, "batchSize", "rows per forward", ParamValidators.gt(0))

  /** @group param */
  final val handleNull: Param[String] = new Param[String](this, "handleNull",
    "a row with a null input: 'null' (its outputs are null) or 'error' (the job fails)",
    ParamValidators.inArray(Array("null", "error")))

  setDefault(modelEpoch -> 0, outputCols -> Array("prediction"), outputType -> "array", batchSize -> 64,
    handleNull -> "null")

  /** The model as bytes (setModelBytes), instead of files. */
  @volatile private var modelInMemory: Option[ModelBytes] = None

  /** Reads the model from PREFIX-symbol.json and PREFIX-EEEE.params (EEEE = epoch). */
  def setModel(prefix: String, epoch: Int): this.type = {
    modelInMemory = None
    set(modelPrefix, prefix).set(modelEpoch, epoch)
  }

  /** Sets [[modelPrefix]] (and drops model bytes set before). */
  def setModelPrefix(prefix: String): this.type = { modelInMemory = None; set(modelPrefix, prefix) }
  /** Sets [[modelEpoch]]. */
  def setModelEpoch(epoch: Int): this.type = set(modelEpoch, epoch)

  /** The model from the bytes of its symbol JSON and .params files. */
  def setModelBytes(json: Array[Byte], params: Array[Byte]): this.type =
    setModelBytes(ModelBytes(json.clone(), params.clone(), "(model bytes)"))

  private def setModelBytes(bytes: ModelBytes): this.type = {
    modelInMemory = Some(bytes)
    clear(modelPrefix)
  }

  /** One input column: sets [[inputCols]] to `column` alone. */
  def setInputCol(column: String): this.type = set(inputCols, Array(column))
  /** Sets [[inputCols]]. */
  def setInputCols(columns: Array[String]): this.type = set(inputCols, columns)
  /** Sets [[modelInputs]]. */
  def setModelInputs(names: Array[String]): this.type = set(modelInputs, names)

  /** The per-row shape of the single input column (no dimensions: one value per row). */
  @varargs def setInputShape(dims: Int*): this.type = set(inputShapes, Array(dims.mkString(",")))

  /** The per-row shape of each input column, in input column order. */
  def setInputShapes(shapes: Array[Array[Int]]): this.type = set(inputShapes, shapes.map(_.mkString(",")))

  /** One output column: sets [[outputCols]] to `column` alone. */
  def setOutputCol(column: String): this.type = set(outputCols, Array(column))
  /** Sets [[outputCols]]. */
  def setOutputCols(columns: Array[String]): this.type = set(outputCols, columns)
  /** Sets [[modelOutputs]]. */
  def setModelOutputs(names: Array[String]): this.type = set(modelOutputs, names)
  /** Sets [[outputType]]: "array" or "vector". */
  def setOutputType(value: String): this.type = set(outputType, value)
  /** Sets [[batchSize]]. */
  def setBatchSize(value: Int): this.type = set(batchSize, value)
  /** Sets [[handleNull]]: "null" or "error". */
  def setHandleNull(value: String): this.type = set(handleNull, value)

  /** The value of [[modelPrefix]]. */
  def getModelPrefix: String = $(modelPrefix)
  /** The value of [[modelEpoch]]. */
  def getModelEpoch: Int = $(modelEpoch)
  /** The value of [[inputCols]]. */
  def getInputCols: Array[String] = $(inputCols)
  /** The value of [[modelInputs]]. */
  def getModelInputs: Array[String] = $(modelInputs)
  /** The value of [[inputShapes]], parsed: one shape per input column. */
  def getInputShapes: Array[Array[Int]] = $(inputShapes).map(s => Shapes.parse(s).map(_.toInt))
  /** The value of [[outputCols]]. */
  def getOutputCols: Array[String] = $(outputCols)
  /** The value of [[modelOutputs]]. */
  def getModelOutputs: Array[String] = $(modelOutputs)
  /** The value of [[outputType]]. */
  def getOutputType: String = $(outputType)
  /** The value of [[batchSize]]. */
  def getBatchSize: Int = $(batchSize)
  /** The value of [[handleNull]]. */
  def getHandleNull: String = $(handleNull)

  override def transformSchema(schema: StructType): StructType = {
    checkModelSet()
    check(isDefined(inputCols) && $(inputCols).nonEmpty, "hybridnet: set the input column(s) (setInputCol)")
    val columns = $(inputCols)
    for (c <- columns if !schema.fieldNames.contains(c)) {
      throw new IllegalArgumentException(
        s"hybridnet: no input column '$c' among ${schema.fieldNames.mkString("[", ", ", "]")}")
    }
    checkInputs(columns.map(c => c -> ColumnKind.of(c, schema(c).dataType)).toIndexedSeq)
    for (c <- $(outputCols) if schema.fieldNames.contains(c)) {
      throw new IllegalArgumentException(s"hybridnet: output column '$c' already exists")
    }
    StructType(schema.fields ++ outputFields)
  }

  override def transform(dataset: Dataset[_]): DataFrame = {
    check(!dataset.isStreaming, "hybridnet: the transformer scores batch DataFrames; for a stream, call it " +
      "on each micro-batch (foreachBatch)")
    val outputSchema = transformSchema(dataset.schema, logging = true)
    val session = dataset.sparkSession
    val columns = $(inputCols).map(c => c -> ColumnKind.of(c, dataset.schema(c).dataType)).toIndexedSeq
    val spec = scoringSpec(session, columns, $(batchSize))
    val ordinals = $(inputCols).map(dataset.schema.fieldIndex)
    val scored = SparkInternals.internalRows(dataset)
      .mapPartitions(rows => BatchScorer.scorePartition(spec, ordinals, rows))
    SparkInternals.createDataFrame(session, scored, outputSchema)
  }

  /** Destroys the model's broadcast (if a transform made one): executors free the model within
    * about a second. The next `transform` reads and broadcasts the model again.
    */
  def release(): Unit = synchronized {
    if (prepared != null) {
      prepared.broadcast.destroy()
      prepared = null
    }
  }

  override def copy(extra: ParamMap): HybridnetTransformer = {
    val copied = defaultCopy[HybridnetTransformer](extra)
    copied.modelInMemory = modelInMemory
    copied
  }

  override def write: MLWriter = new HybridnetTransformer.Writer(this)

  // ---- driver side ---------------------------------------------------------------------------

  /** The model as the driver read, checked and broadcast it, and the input shapes checked. */
  private final class Prepared(val key: Any, val broadcast: Broadcast[ModelBytes], val inputNames: Seq[String],
                               val outputNames: Seq[String]) {
    val checkedShapes: mutable.Set[String] = mutable.Set.empty
  }

  @transient private var prepared: Prepared = _

  /** The scoring plan of `columns` (name and kind, in model-input order) after reading,
    * checking and broadcasting the model (once while its files do not change).
    */
  private[spark] def scoringSpec(session: SparkSession, columns: IndexedSeq[(String, ColumnKind)],
                                 rowsPerBatch: Int): ScoringSpec = synchronized {
    checkInputs(columns)
    val model = prepare(session)
    val inputNames = if (isDefined(modelInputs)) $(modelInputs).toSeq else model.inputNames.take(columns.size)
    for (n <- inputNames if !model.inputNames.contains(n)) {
      throw new IllegalArgumentException(
        s"hybridnet: the model has no input '$n'; its inputs are ${model.inputNames.mkString("[", ", ", "]")}")
    }
    if (inputNames.size < columns.size) {
      throw new IllegalArgumentException(s"hybridnet: ${columns.size} input columns for the model's " +
        s"${model.inputNames.size} input(s) ${model.inputNames.mkString("[", ", ", "]")}")
    }
    val inputs = columns.zip(inputNames).zip($(inputShapes)).map { case (((column, kind), name), shape) =>
      InputSpec(column, kind, name, Shapes.parse(shape))
    }.toArray
    val outputNames = if (isDefined(modelOutputs)) $(modelOutputs).toSeq else model.outputNames.take($(outputCols).length)
    if (outputNames.size < $(outputCols).length) {
      throw new IllegalArgumentException(s"hybridnet: ${$(outputCols).length} output columns for the model's " +
        s"${model.outputNames.size} output(s) ${model.outputNames.mkString("[", ", ", "]")}")
    }
    val outputs = $(outputCols).zip(outputNames).map { case (column, name) =>
      val index = model.outputNames.indexOf(name)
      if (index < 0) {
        throw new IllegalArgumentException(
          s"hybridnet: the model has no output '$name'; its outputs are ${model.outputNames.mkString("[", ", ", "]")}")
      }
      OutputSpec(column, name, index)
    }
    for (in <- inputs if in.rowSize.toLong * rowsPerBatch * 4 > Int.MaxValue) {
      throw new IllegalArgumentException(s"hybridnet: a batch of $rowsPerBatch rows of shape ${in.describeShape} " +
        s"(column '${in.column}') needs more than 2 GB; lower batchSize")
    }
    checkRuns(model, inputs, outputs)
    ScoringSpec(model.broadcast, inputs, outputs, rowsPerBatch, $(handleNull) == "error", $(outputType) == "vector")
  }

  /** The type of each output column. */
  private[spark] def outputFields: Array[StructField] = {
    val dataType: DataType =
      if ($(outputType) == "vector") SQLDataTypes.VectorType else ArrayType(FloatType, containsNull = false)
    check($(outputCols).nonEmpty && $(outputCols).distinct.length == $(outputCols).length,
      "hybridnet: the output columns must be distinct and at least one")
    if (isDefined(modelOutputs)) {
      check($(modelOutputs).length == $(outputCols).length,
        s"hybridnet: ${$(modelOutputs).length} model outputs named for ${$(outputCols).length} output columns")
    }
    $(outputCols).map(StructField(_, dataType, nullable = true))
  }

  /** Checks what can be checked without the model: a source, shapes and model input names
    * matching the columns, shapes fitting their columns' kinds.
    */
  private def checkInputs(columns: IndexedSeq[(String, ColumnKind)]): Unit = {
    checkModelSet()
    check(isDefined(inputShapes), "hybridnet: set the per-row input shape(s) (setInputShape, setInputShapes)")
    val shapes = $(inputShapes)
    check(shapes.length == columns.size,
      s"hybridnet: ${shapes.length} input shape(s) for ${columns.size} input(s)")
    if (isDefined(modelInputs)) {
      check($(modelInputs).length == columns.size,
        s"hybridnet: ${$(modelInputs).length} model inputs named for ${columns.size} input(s)")
      check($(modelInputs).distinct.length == $(modelInputs).length, "hybridnet: a model input is named twice")
    }
    for (((column, kind), shape) <- columns.zip(shapes) if kind.scalar && Shapes.size(Shapes.parse(shape)) != 1) {
      throw new IllegalArgumentException(s"hybridnet: column '$column' holds one ${kind.sqlName} per row, but " +
        s"its per-row shape ${Shapes.format(Shapes.parse(shape))} needs more values")
    }
  }

  /** Like `require`, without its "requirement failed" prefix. */
  private def check(condition: Boolean, message: => String): Unit =
    if (!condition) throw new IllegalArgumentException(message)

  private def checkModelSet(): Unit =
    check(modelInMemory.isDefined || isDefined(modelPrefix),
      "hybridnet: set the model (setModel(prefix, epoch) or setModelBytes(json, params))")

  private def prepare(session: SparkSession): Prepared = {
    ExecutorSetup.ensure()
    val hadoopConf = session.sparkContext.hadoopConfiguration
    val key: Any = modelInMemory.getOrElse(
      ($(modelPrefix), $(modelEpoch), ModelBytes.stamp($(modelPrefix), $(modelEpoch), hadoopConf)))
    if (prepared == null || prepared.key != key) {
      val bytes = modelInMemory.getOrElse(ModelBytes.read($(modelPrefix), $(modelEpoch), hadoopConf))
      val (in, out) = HybridnetTransformer.withDriverModel(bytes) { m =>
        (m.inputNames().asScala.toSeq, m.outputNames().asScala.toSeq)
      }
      // A previous broadcast stays for DataFrames still using it; Spark cleans it once unreachable.
      prepared = new Prepared(key, session.sparkContext.broadcast(bytes), in, out)
    }
    prepared
  }

  /** One forward of a single zero row on the driver: a shape the model rejects fails here. */
  private def checkRuns(model: Prepared, inputs: Array[InputSpec], outputs: Array[OutputSpec]): Unit = {
    val signature = inputs.map(i => s"${i.modelInput}=${i.rowShape.mkString(",")}").mkString(";") +
      outputs.map(_.modelIndex).mkString("|", ",", "")
    if (!model.checkedShapes.contains(signature)) {
      val bytes = model.broadcast.value
      HybridnetTransformer.withDriverModel(bytes) { m =>
        Using.resource(m.newPredictor()) { p =>
          try {
            for (in <- inputs) p.setInput(in.modelInput, new Array[Float](in.rowSize), (1L +: in.rowShape): _*)
            p.forward()
          } catch {
            case e: HybridnetException => throw new HybridnetSparkException(
                s"hybridnet: the model ${bytes.description} does not run on the per-row input shape(s) " +
                  inputs.map(i => s"${i.modelInput}: ${i.describeShape}").mkString(", ") + s": ${e.nativeMessage}", e)
          }
          for (out <- outputs) {
            val shape = p.outputShape(out.modelIndex)
            if (shape.isEmpty || shape(0) != 1) {
              throw new HybridnetSparkException(s"hybridnet: model output '${out.modelOutput}' has shape " +
                s"${Shapes.format(shape)} for one row; its first dimension must be the batch")
            }
          }
        }
      }
      model.checkedShapes += signature
    }
  }

  /** The model's bytes for saving: the files read now, or the bytes set. */
  private def modelBytesForSave(session: SparkSession): ModelBytes = {
    checkModelSet()
    modelInMemory.getOrElse(ModelBytes.read($(modelPrefix), $(modelEpoch), session.sparkContext.hadoopConfiguration))
  }

  private def paramsWriter: MLWriter = super.write
}

/** Reads transformers saved with `write.save(path)`, which stores the model's two files with the
  * params: `HybridnetTransformer.load(path)`.
  */
object HybridnetTransformer extends DefaultParamsReadable[HybridnetTransformer] {
  override def read: MLReader[HybridnetTransformer] = new Reader

  override def load(path: String): HybridnetTransformer = super.load(path)

  /** Loads `bytes` on the driver for `f`; a model that does not load names its files. */
  private def withDriverModel[T](bytes: ModelBytes)(f: Model => T): T = {
    ExecutorSetup.ensure()
    val model =
      try Model.fromBytes(bytes.json, bytes.params)
      catch {
        case e: HybridnetException =>
          throw new HybridnetSparkException(s"hybridnet: the model ${bytes.description} does not load: ${e.getMessage}", e)
      }
    Using.resource(model)(f)
  }

  /** Saves the params (Spark's metadata) and the model's two files under PATH/model/. */
  private class Writer(instance: HybridnetTransformer) extends MLWriter {
    override protected def saveImpl(path: String): Unit = {
      val bytes = instance.modelBytesForSave(sparkSession)
      instance.paramsWriter.session(sparkSession).save(path)
      ModelBytes.write(bytes, new Path(path, "model").toString, sparkSession.sparkContext.hadoopConfiguration)
    }
  }

  private class Reader extends MLReader[HybridnetTransformer] {
    override def load(path: String): HybridnetTransformer = {
      val transformer = readParams(sparkSession, path)
      transformer.setModelBytes(
        ModelBytes.read(new Path(path, "model/model").toString, 0, sparkSession.sparkContext.hadoopConfiguration))
    }
  }

  private def readParams(session: SparkSession, path: String): HybridnetTransformer =
    super.read.session(session).load(path)
}
