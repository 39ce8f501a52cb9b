package org.hybridnet.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.ml.linalg.DenseVector
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow, UnsafeArrayData, UnsafeRow}
import org.apache.spark.unsafe.Platform
import org.hybridnet.NDArray

/** Everything a task needs to score rows, resolved on the driver: the broadcast model, which
  * row fields feed which model inputs, which outputs to keep, how many rows per forward.
  */
private[spark] final case class ScoringSpec(model: Broadcast[ModelBytes], inputs: Array[InputSpec],
                                            outputs: Array[OutputSpec], batchSize: Int,
                                            failOnNull: Boolean, outputVectors: Boolean)

/** Runs a predictor over batches of rows. Rows are written straight into the direct buffers the
  * predictor reads (shared, not copied), so per batch there is one native call per input and
  * one copy out per output; per row only the output values are allocated.
  *
  * @param ordinals the field of each input in the rows given to [[scoreBatch]]
  */
private[spark] final class BatchScorer(spec: ScoringSpec, ordinals: Array[Int], slot: PredictorSlot) {
  private val predictor = slot.predictor
  private val capacity = spec.batchSize
  private val inputs = spec.inputs
  private val buffers = inputs.indices.map(i => slot.inputBuffer(i, Math.multiplyExact(capacity, inputs(i).rowSize))).toArray
  private val shapes = inputs.map(in => 0L +: in.rowShape)
  private val slots = new Array[Int](capacity)
  private val outputs = Array.fill(spec.outputs.length)(new Array[Float](0))
  private val perRow = new Array[Int](spec.outputs.length)

  /** Scores rows(0 until count) (count <= batchSize); read the results with [[output]]. */
  def scoreBatch(rows: Array[InternalRow], count: Int): Unit = {
    var fed = 0
    var r = 0
    while (r < count) {
      if (read(rows(r), fed)) { slots(r) = fed; fed += 1 }
      else slots(r) = -1
      r += 1
    }
    if (fed > 0) {
      forward(fed)
      var o = 0
      while (o < outputs.length) { fetch(o, fed); o += 1 }
    }
  }

  /** Output `o` of row `r` of the last batch: a new array<float> (or Vector) value, or null for a
    * row with a null input.
    */
  def output(o: Int, r: Int): Any =
    if (slots(r) < 0) null
    else {
      val size = perRow(o)
      val offset = slots(r) * size
      if (spec.outputVectors) {
        val values = new Array[Double](size)
        var i = 0
        while (i < size) { values(i) = outputs(o)(offset + i).toDouble; i += 1 }
        ColumnKind.MLVector.udt.serialize(new DenseVector(values))
      } else {
        // The offset is the Unsafe one (array base + bytes).
        UnsafeArrayData.fromPrimitiveArray(outputs(o), Math.toIntExact(Platform.FLOAT_ARRAY_OFFSET + offset.toLong * 4), size, 4)
      }
    }

  /** Writes one row's inputs into batch slot `slot`; false for a row with a null input. */
  private def read(row: InternalRow, slot: Int): Boolean = {
    var i = 0
    while (i < inputs.length) {
      val in = inputs(i)
      if (row.isNullAt(ordinals(i)) || !in.kind.read(row, ordinals(i), buffers(i), slot * in.rowSize, in)) {
        if (spec.failOnNull) throw in.nullInput
        return false
      }
      i += 1
    }
    true
  }

  private def forward(rows: Int): Unit = {
    var i = 0
    while (i < inputs.length) {
      val shape = shapes(i)
      shape(0) = rows.toLong
      val values = buffers(i).asFloatBuffer()
      values.limit(rows * inputs(i).rowSize)
      val batch = NDArray.wrap(values, shape: _*) // the predictor shares this memory until the next batch
      try predictor.setInput(inputs(i).modelInput, batch)
      finally batch.close()
      i += 1
    }
    predictor.forward()
  }

  /** Copies output `o` of a forward of `rows` rows out. */
  private def fetch(o: Int, rows: Int): Unit = {
    val out = spec.outputs(o)
    val shape = predictor.outputShape(out.modelIndex)
    if (shape.isEmpty || shape(0) != rows) {
      throw new HybridnetSparkException(s"hybridnet: model output '${out.modelOutput}' has shape " +
        s"${Shapes.format(shape)} for a batch of $rows rows; its first dimension must be the batch")
    }
    perRow(o) = Shapes.size(shape.drop(1))
    val size = Math.multiplyExact(perRow(o), rows)
    if (outputs(o).length < size) outputs(o) = new Array[Float](size)
    predictor.getOutput(out.modelIndex, outputs(o))
  }
}

private[spark] object BatchScorer {
  /** Scores a partition: its rows, each followed by the output columns, batch by batch. */
  def scorePartition(spec: ScoringSpec, ordinals: Array[Int], rows: Iterator[InternalRow]): Iterator[InternalRow] =
    new Iterator[InternalRow] {
      private lazy val scorer = new BatchScorer(spec, ordinals, ModelCache.taskPredictor(spec))
      private val batch = new RowBatch(spec.batchSize)
      private var position = 0
      private val outputs = new GenericInternalRow(spec.outputs.length)
      private val joined = new JoinedRow

      override def hasNext: Boolean = position < batch.size || fill()

      override def next(): InternalRow = {
        if (!hasNext) throw new NoSuchElementException
        var o = 0
        while (o < outputs.numFields) { outputs.update(o, scorer.output(o, position)); o += 1 }
        val row = joined(batch.rows(position), outputs)
        position += 1
        row
      }

      private def fill(): Boolean = {
        batch.clear()
        position = 0
        while (batch.size < spec.batchSize && rows.hasNext) batch.add(rows.next())
        if (batch.size > 0) scorer.scoreBatch(batch.rows, batch.size)
        batch.size > 0
      }
    }
}

/** Copies of the rows of one batch (the input iterator reuses its row objects). Unsafe rows, the
  * usual kind, are copied into buffers kept from batch to batch.
  */
private final class RowBatch(capacity: Int) {
  val rows = new Array[InternalRow](capacity)
  private val copies = new Array[UnsafeRow](capacity)
  private val memory = Array.fill(capacity)(new Array[Byte](0))
  var size = 0

  def clear(): Unit = size = 0

  def add(row: InternalRow): Unit = {
    rows(size) = row match {
      case u: UnsafeRow =>
        val bytes = u.getSizeInBytes
        if (memory(size).length < bytes) memory(size) = new Array[Byte](Math.max(bytes, memory(size).length * 2))
        u.writeToMemory(memory(size), Platform.BYTE_ARRAY_OFFSET)
        if (copies(size) == null || copies(size).numFields != u.numFields) copies(size) = new UnsafeRow(u.numFields)
        copies(size).pointTo(memory(size), bytes)
        copies(size)
      case other => other.copy()
    }
    size += 1
  }
}
