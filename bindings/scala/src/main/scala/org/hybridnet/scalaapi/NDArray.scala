package org.hybridnet.scalaapi

import java.nio.FloatBuffer
import java.nio.file.Path

import scala.collection.immutable.ArraySeq

import org.hybridnet.{NDArray => JNDArray, Op => JOp}

/** An n-dimensional array in native memory. Close it (or use `scala.util.Using`); `close()` twice
  * is harmless, a call after `close()` throws `IllegalStateException`.
  *
  * {{{
  * Using.resource(NDArray(Array(1f, 2f, 3f, 4f), Shape(2, 2))) { x => x.shape }  // (2, 2)
  * }}}
  */
final class NDArray private[scalaapi] (val asJava: JNDArray) extends AutoCloseable {
  /** The dimensions. */
  def shape: Shape = Shape.of(asJava.shape())
  /** The number of dimensions. */
  def ndim: Int = asJava.ndim()
  /** The number of elements. */
  def size: Long = asJava.size()

  /** numpy's name of the element type ("float32", ...). */
  def dtype: String = asJava.dtype()

  /** The elements as a new `Array[Float]` (other dtypes are converted). */
  def toArray: Array[Float] = asJava.toFloatArray()

  /** The elements as an immutable `IndexedSeq[Float]`. */
  def toSeq: IndexedSeq[Float] = ArraySeq.unsafeWrapArray(asJava.toFloatArray())

  /** Overwrites the elements (exactly `size` values). */
  def update(values: Array[Float]): Unit = asJava.copyFrom(values)

  /** A view with another shape of the same size (shares the elements). */
  def reshape(shape: Shape): NDArray = new NDArray(asJava.reshape(shape.toArray: _*))

  /** Writes a numpy .npy file. */
  def save(path: Path): Unit = asJava.save(path)

  /** Marks this array as a variable whose gradient backward computes: grad_req "write" (each
    * backward overwrites the gradient), "add" (adds to it) or "null" (MXNet's `attach_grad`).
    */
  def attachGrad(gradReq: String = "write"): Unit = asJava.attachGrad(gradReq)

  /** The gradient buffer of this variable, sharing its storage (close it); an
    * `IllegalStateException` before [[attachGrad]].
    */
  def grad: NDArray = new NDArray(asJava.grad())

  /** The gradient of this recorded result with respect to its variables (see [[autograd]]). */
  def backward(): Unit = asJava.backward()

  /** The same values, cut from the recorded graph: gradients do not flow through it (close it). */
  def detach(): NDArray = new NDArray(asJava.detach())

  /** The sum of every element, a scalar array (close it). */
  def sum(): NDArray = new NDArray(asJava.sum())

  /** The value of a one-element array. */
  def toFloat: Float = asJava.toFloat()

  /** Elementwise sum, broadcasting as numpy does (a new array: close it). */
  def +(other: NDArray): NDArray = NDArray.binary("broadcast_add", this, other)
  /** Elementwise difference, broadcasting. */
  def -(other: NDArray): NDArray = NDArray.binary("broadcast_sub", this, other)
  /** Elementwise product, broadcasting. */
  def *(other: NDArray): NDArray = NDArray.binary("broadcast_mul", this, other)
  /** Elementwise quotient, broadcasting. */
  def /(other: NDArray): NDArray = NDArray.binary("broadcast_div", this, other)

  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
  override def toString: String = asJava.toString
}

/** Makes [[NDArray]]s. */
object NDArray {
  /** A float32 array holding a copy of `values`. */
  def apply(values: Array[Float], shape: Shape): NDArray =
    new NDArray(JNDArray.of(values, shape.toArray: _*))

  /** A float32 array from any sequence of floats. */
  def apply(values: Seq[Float], shape: Shape): NDArray = apply(values.toArray, shape)

  /** A 1-D float32 array: `NDArray(1f, 2f, 3f)`. */
  def apply(first: Float, rest: Float*): NDArray = {
    val values = (first +: rest).toArray
    apply(values, Shape(values.length.toLong))
  }

  /** A zero-filled float32 array. */
  def zeros(shape: Shape): NDArray = new NDArray(JNDArray.zeros(shape.toArray: _*))

  /** Zero-copy over a direct, native-order FloatBuffer (position to limit). */
  def wrap(buffer: FloatBuffer, shape: Shape): NDArray =
    new NDArray(JNDArray.wrap(buffer, shape.toArray: _*))

  /** Reads a numpy .npy file. */
  def load(path: Path): NDArray = new NDArray(JNDArray.load(path))

  /** Adopts a Java NDArray (this wrapper closes it). */
  def fromJava(array: JNDArray): NDArray = new NDArray(array)

  private[scalaapi] def binary(op: String, a: NDArray, b: NDArray): NDArray =
    new NDArray(JOp.invoke1(op, java.util.Map.of[String, String](), a.asJava, b.asJava))
}

/** Eager operators by their MXNet names: `Op("FullyConnected", "num_hidden" -> "4")(x, w, b)`. */
object Op {
  /** Runs the op `name` with `attrs` (MXNet's attribute text) on `inputs`; returns every output
    * (close each).
    */
  def apply(name: String, attrs: (String, String)*)(inputs: NDArray*): Seq[NDArray] = {
    JOp.invoke(name, toJavaMap(attrs), inputs.map(_.asJava): _*).toSeq.map(new NDArray(_))
  }

  /** The names of every op. */
  def names: Seq[String] = {
    import scala.jdk.CollectionConverters._
    JOp.names().asScala.toSeq
  }
}
