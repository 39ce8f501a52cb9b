package org.hybridnet.spark

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.hybridnet.SparkInternals
import org.apache.spark.sql.types.{DataType, StructType}

/** A model as a SQL function.
  *
  * {{{
  * HybridnetSql.register(spark, "score", new HybridnetTransformer().setModel(prefix, 0).setInputShape(512))
  * spark.sql("SELECT id, score(features) AS prediction FROM t")
  * }}}
  *
  * The function takes one argument per model input (the transformer's `inputShapes`, mapped to
  * `modelInputs` as in the transformer; its `inputCols` are not used), of the column types the
  * transformer reads, and returns the first output column's type, or, for several `outputCols`,
  * a struct with one field per output column. Nulls are handled as the transformer's
  * `handleNull` says. The model is read, checked and broadcast when the function is registered;
  * executors load it once as for the transformer. Spark evaluates a SQL function row by row, so
  * each row is one forward (batch 1): for throughput, use the transformer, which batches.
  */
object HybridnetSql {
  /** Registers (or replaces) the temporary function `name` of `session` scoring with `model`. */
  def register(session: SparkSession, name: String, model: HybridnetTransformer): Unit = {
    val arity = if (model.isDefined(model.inputShapes)) model.getInputShapes.length else 0
    // Checked and broadcast now; the argument kinds are resolved when a query uses the function.
    val template = model.scoringSpec(session,
      (1 to arity).map(i => s"argument $i of $name" -> ColumnKind.FloatArray(containsNull = false)), 1)
    val fields = model.outputFields
    val dataType = if (fields.length == 1) fields(0).dataType else StructType(fields)
    SparkInternals.registerFunction(session, name, arguments => {
      if (arguments.size != arity) {
        throw new IllegalArgumentException(s"hybridnet: $name takes $arity argument(s), one per model input " +
          s"${template.inputs.map(_.modelInput).mkString("(", ", ", ")")}, not ${arguments.size}")
      }
      ScoreExpression(arguments, name, template, dataType)
    })
  }
}

/** The SQL function's expression: one forward per row, with the task's predictor. */
private[spark] final case class ScoreExpression(children: Seq[Expression], name: String, template: ScoringSpec,
                                                dataType: DataType) extends Expression with CodegenFallback {
  override def nullable: Boolean = true

  override def prettyName: String = name

  override def checkInputDataTypes(): TypeCheckResult =
    try { spec; TypeCheckResult.TypeCheckSuccess }
    catch { case NonFatal(e) => TypeCheckResult.TypeCheckFailure(e.getMessage) }

  /** The template with each input read from its argument's type. */
  @transient private lazy val spec: ScoringSpec = template.copy(inputs = template.inputs.zip(children).map {
    case (in, child) =>
      val kind = ColumnKind.of(child.sql, child.dataType)
      if (kind.scalar && in.rowSize != 1) {
        throw new IllegalArgumentException(s"hybridnet: ${child.sql} holds one ${kind.sqlName} per row, but the " +
          s"per-row shape ${in.describeShape} of model input '${in.modelInput}' needs ${in.rowSize} values")
      }
      in.copy(column = child.sql, kind = kind)
  }.toArray)

  private val ordinals = children.indices.toArray
  @transient private lazy val taskScorer = new BatchScorer(spec, ordinals, ModelCache.taskPredictor(spec))
  @transient private lazy val single = new Array[InternalRow](1)

  override def eval(input: InternalRow): Any = {
    val arguments = new GenericInternalRow(children.map(_.eval(input)).toArray)
    // Spark may evaluate on the driver, outside a task (e.g. folding a local relation).
    if (TaskContext.get() != null) score(taskScorer, arguments)
    else ModelCache.withPredictor(spec)(p => score(new BatchScorer(spec, ordinals, p), arguments))
  }

  private def score(scorer: BatchScorer, arguments: InternalRow): Any = {
    single(0) = arguments
    scorer.scoreBatch(single, 1)
    if (template.outputs.length == 1) scorer.output(0, 0)
    else if (scorer.output(0, 0) == null) null // a null input: every output is null
    else new GenericInternalRow(template.outputs.indices.map(scorer.output(_, 0)).toArray[Any])
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
    copy(children = newChildren)
}
