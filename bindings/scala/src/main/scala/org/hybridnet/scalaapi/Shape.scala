package org.hybridnet.scalaapi

/** The dimensions of an array, immutable: `Shape(1, 512)`. */
final case class Shape(dims: Vector[Long]) {
  require(dims.forall(_ >= 0), s"dimensions must be >= 0: ${dims.mkString(", ")}")

  /** The number of dimensions. */
  def ndim: Int = dims.length

  /** The number of elements (1 for a scalar). */
  def size: Long = dims.product

  /** Dimension `axis`. */
  def apply(axis: Int): Long = dims(axis)

  /** The dimensions as a Java-style array (a copy). */
  def toArray: Array[Long] = dims.toArray

  /** numpy's spelling: (1, 512), (3,), (). */
  override def toString: String =
    if (dims.length == 1) s"(${dims.head},)" else dims.mkString("(", ", ", ")")
}

/** Makes [[Shape]]s. */
object Shape {
  /** `Shape(1, 512)`. */
  def apply(first: Long, rest: Long*): Shape = Shape((first +: rest).toVector)

  /** A scalar's shape (no dimensions). */
  val scalar: Shape = Shape(Vector.empty[Long])

  /** From the Java binding's `long[]`. */
  def of(dims: Array[Long]): Shape = Shape(dims.toVector)
}
