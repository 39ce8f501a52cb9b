package org.hybridnet.spark

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.ml.linalg.{DenseVector, SQLDataTypes, SparseVector, Vector}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

/** One model input fed from one column: which column, its Spark type, the model input it feeds
  * and the shape of one row's value (the batch dimension is prepended).
  */
private[spark] final case class InputSpec(column: String, kind: ColumnKind, modelInput: String,
                                          rowShape: Array[Long]) {
  /** The float32 values of one row. */
  val rowSize: Int = Shapes.size(rowShape)

  def describeShape: String = Shapes.format(rowShape)

  def wrongLength(found: String): HybridnetSparkException = new HybridnetSparkException(
    s"hybridnet: column '$column': a row has $found, but the per-row input shape $describeShape of " +
      s"model input '$modelInput' needs $rowSize value${if (rowSize == 1) "" else "s"}")

  def nullInput: HybridnetSparkException = new HybridnetSparkException(
    s"hybridnet: column '$column': a row is null or holds a null element (handleNull=error; with " +
      "handleNull=null such rows get null outputs)")

  def inexact(value: Long, index: Int): HybridnetSparkException = new HybridnetSparkException(
    s"hybridnet: column '$column': value $value at index $index is not exactly representable as " +
      "float32, the model's input type (integers must be within +-2^24)")
}

/** One model output written to one column (`modelIndex` is its position among the outputs). */
private[spark] final case class OutputSpec(column: String, modelOutput: String, modelIndex: Int)

/** The column types a model input is read from, each converted to float32 without boxing. */
private[spark] sealed abstract class ColumnKind(val sqlName: String) extends Serializable {
  /** Writes one row's non-null value as float32 values `offset until offset + input.rowSize` of
    * `dst` (a native-order buffer). Returns false when the value holds a null element. Throws for
    * a wrong length.
    */
  def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean

  /** True for a single number per row (the per-row shape must hold one value). */
  def scalar: Boolean = false
}

private[spark] object ColumnKind {
  /** The kind reading `dataType`, or an IllegalArgumentException listing those accepted. */
  def of(column: String, dataType: DataType): ColumnKind = dataType match {
    case ArrayType(FloatType, nulls) => FloatArray(nulls)
    case ArrayType(DoubleType, nulls) => NumberArray("array<double>", nulls, (a, i, _) => a.getDouble(i).toFloat)
    case ArrayType(IntegerType, nulls) => NumberArray("array<int>", nulls, (a, i, in) => exactFloat(a.getInt(i), i, in))
    case ArrayType(LongType, nulls) => NumberArray("array<bigint>", nulls, (a, i, in) => exactFloat(a.getLong(i), i, in))
    case BinaryType => Binary
    case FloatType => Scalar("float", (r, o, _) => r.getFloat(o))
    case DoubleType => Scalar("double", (r, o, _) => r.getDouble(o).toFloat)
    case IntegerType => Scalar("int", (r, o, in) => exactFloat(r.getInt(o), 0, in))
    case LongType => Scalar("bigint", (r, o, in) => exactFloat(r.getLong(o), 0, in))
    case t if t == SQLDataTypes.VectorType => MLVector
    case other => throw new IllegalArgumentException(
        s"hybridnet: column '$column' has type ${other.catalogString}; a model input is read from " +
          "array<float>, array<double>, array<int>, array<bigint>, an ML Vector, binary (raw little-endian " +
          "float32) or, for one value per row, float, double, int or bigint")
  }

  private val MaxExactInt = 1L << 24

  private def exactFloat(v: Long, index: Int, input: InputSpec): Float = {
    if (v > MaxExactInt || v < -MaxExactInt) throw input.inexact(v, index)
    v.toFloat
  }

  private def checkLength(n: Int, input: InputSpec): Unit =
    if (n != input.rowSize) throw input.wrongLength(s"$n value${if (n == 1) "" else "s"}")

  /** True when one of the `n` elements is null (only arrays typed with nullable elements can). */
  private def nullElement(a: ArrayData, n: Int, containsNull: Boolean): Boolean = containsNull && {
    var i = 0
    while (i < n && !a.isNullAt(i)) i += 1
    i < n
  }

  final case class FloatArray(containsNull: Boolean) extends ColumnKind("array<float>") {
    override def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      checkLength(n, input)
      if (nullElement(a, n, containsNull)) return false
      a match {
        case u: UnsafeArrayData if u.getBaseObject.isInstanceOf[Array[Byte]] =>
          // The common case, one bulk copy: Spark stores the floats in native order too.
          val start = u.getBaseOffset - Platform.BYTE_ARRAY_OFFSET + UnsafeArrayData.calculateHeaderPortionInBytes(n)
          dst.put(offset * 4, u.getBaseObject.asInstanceOf[Array[Byte]], Math.toIntExact(start), n * 4)
        case _ =>
          var i = 0
          while (i < n) { dst.putFloat((offset + i) * 4, a.getFloat(i)); i += 1 }
      }
      true
    }
  }

  /** Arrays of other numbers, converted element by element (`get` reads element i as float32). */
  final case class NumberArray(name: String, containsNull: Boolean, get: (ArrayData, Int, InputSpec) => Float)
      extends ColumnKind(name) {
    override def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean = {
      val a = row.getArray(ordinal)
      val n = a.numElements()
      checkLength(n, input)
      if (nullElement(a, n, containsNull)) return false
      var i = 0
      while (i < n) { dst.putFloat((offset + i) * 4, get(a, i, input)); i += 1 }
      true
    }
  }

  case object Binary extends ColumnKind("binary") {
    override def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean = {
      val bytes = row.getBinary(ordinal)
      if (bytes.length != input.rowSize * 4) {
        val whole = if (bytes.length % 4 == 0) s"${bytes.length / 4} float32 values" else "not whole float32 values"
        throw input.wrongLength(s"${bytes.length} bytes ($whole)")
      }
      if (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN) dst.put(offset * 4, bytes)
      else {
        val values = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
        var i = 0
        while (i < input.rowSize) { dst.putFloat((offset + i) * 4, values.getFloat(i * 4)); i += 1 }
      }
      true
    }
  }

  /** One number per row (`get` reads field `ordinal` as float32). */
  final case class Scalar(name: String, get: (InternalRow, Int, InputSpec) => Float) extends ColumnKind(name) {
    override def scalar: Boolean = true

    override def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean = {
      dst.putFloat(offset * 4, get(row, ordinal, input))
      true
    }
  }

  /** Spark ML's Vector (dense or sparse), read through its SQL type. */
  case object MLVector extends ColumnKind("vector") {
    private[spark] val udt: UserDefinedType[Vector] = SQLDataTypes.VectorType.asInstanceOf[UserDefinedType[Vector]]
    private val structFields = udt.sqlType.asInstanceOf[StructType].size

    override def read(row: InternalRow, ordinal: Int, dst: ByteBuffer, offset: Int, input: InputSpec): Boolean = {
      udt.deserialize(row.getStruct(ordinal, structFields)) match {
        case d: DenseVector =>
          checkLength(d.size, input)
          val values = d.values
          var i = 0
          while (i < values.length) { dst.putFloat((offset + i) * 4, values(i).toFloat); i += 1 }
        case s: SparseVector =>
          checkLength(s.size, input)
          var i = 0
          while (i < s.size) { dst.putFloat((offset + i) * 4, 0f); i += 1 }
          i = 0
          while (i < s.indices.length) { dst.putFloat((offset + s.indices(i)) * 4, s.values(i).toFloat); i += 1 }
        case v => throw new HybridnetSparkException(s"hybridnet: column '${input.column}': unknown vector ${v.getClass}")
      }
      true
    }
  }
}

/** Per-row shapes: parsed from and printed as text ("3,32,32"; "" is one value per row). */
private[spark] object Shapes {
  def parse(text: String): Array[Long] =
    if (text.trim.isEmpty) Array.empty
    else text.split(',').map { d =>
      val v = d.trim.toLongOption.getOrElse(throw new IllegalArgumentException(s"hybridnet: bad shape '$text'"))
      if (v <= 0) throw new IllegalArgumentException(s"hybridnet: bad shape '$text': dimensions must be positive")
      v
    }

  def valid(text: String): Boolean = scala.util.Try(size(parse(text))).isSuccess

  def size(shape: Array[Long]): Int = {
    val n = shape.foldLeft(BigInt(1))(_ * _)
    if (n > Int.MaxValue) {
      throw new IllegalArgumentException(s"hybridnet: the per-row shape ${format(shape)} holds $n values, too many for a row")
    }
    n.toInt
  }

  def format(shape: Array[Long]): String = shape.mkString("(", ", ", if (shape.length == 1) ",)" else ")")
}
