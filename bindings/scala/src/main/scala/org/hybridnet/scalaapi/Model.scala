package org.hybridnet.scalaapi

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import org.hybridnet.{Model => JModel, Predictor => JPredictor}

/** A loaded model (graph + weights), immutable and shareable between threads.
  *
  * {{{
  * Using.Manager { use =>
  *   val model = use(Model.load("my_mlp", 0))
  *   val predictor = use(model.predictor())
  *   val y: Array[Float] = predictor(x, Shape(1, 512))
  * }
  * }}}
  */
final class Model private (val asJava: JModel) extends AutoCloseable {
  /** The model's data inputs. */
  def inputNames: Seq[String] = asJava.inputNames().asScala.toSeq
  /** The model's outputs. */
  def outputNames: Seq[String] = asJava.outputNames().asScala.toSeq
  /** The model's graph (close it). */
  def symbol: Symbol = new Symbol(asJava.symbol())

  /** MXNet 1.9.1's `mx.viz.print_summary` table of this model's graph, byte for byte: one row per
    * layer with its output shape (without the batch axis), its parameter count and the layers it
    * reads, then the total; without `inputShapes` the table has no shapes.
    */
  def summary(inputShapes: Map[String, Shape] = Map.empty): String =
    asJava.summary(if (inputShapes.isEmpty) null
                   else inputShapes.map { case (k, v) => k -> v.toArray }.asJava)

  /** A new predictor (use one per thread; they share the weights). */
  def predictor(): Predictor = new Predictor(asJava.newPredictor())

  /** Writes this model as an ONNX file: the weights as initializers, the input and output names
    * kept; `inputShapes` gives the data inputs' shapes, `opset` is 13 to 21 (0: 17), and with
    * `dynamicBatch` axis 0 of the inputs is symbolic.
    */
  def exportOnnx(path: String, inputShapes: Map[String, Shape], opset: Int = 0,
                 dynamicBatch: Boolean = false): Unit =
    asJava.exportOnnx(path, inputShapes.map { case (k, v) => k -> v.toArray }.asJava, opset,
                      dynamicBatch)

  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
  override def toString: String = asJava.toString
}

/** Loads [[Model]]s. */
object Model {
  /** Loads PREFIX-symbol.json and PREFIX-EEEE.params. */
  def load(prefix: String, epoch: Int): Model = new Model(JModel.load(prefix, epoch))

  /** The same with a path prefix. */
  def load(prefix: Path, epoch: Int): Model = load(prefix.toString, epoch)

  /** From memory: symbol JSON and the bytes of a .params file. */
  def fromBytes(json: String, params: Array[Byte]): Model = new Model(JModel.fromBytes(json, params))

  /** From memory: symbol JSON as UTF-8 bytes and the bytes of a .params file. */
  def fromBytes(json: Array[Byte], params: Array[Byte]): Model =
    new Model(JModel.fromBytes(json, params))
}

/** Runs a [[Model]]; calls on one predictor are serialized. `predictor(x, shape)` sets the first
  * input, runs and returns the first output.
  */
final class Predictor private[scalaapi] (val asJava: JPredictor) extends AutoCloseable {
  /** The model's data inputs. */
  def inputNames: Seq[String] = asJava.inputNames().asScala.toSeq
  /** The model's outputs. */
  def outputNames: Seq[String] = asJava.outputNames().asScala.toSeq

  /** First input in, first output out. */
  def apply(input: Array[Float], shape: Shape): Array[Float] = asJava.forward(input, shape.toArray: _*)

  /** First input in, first output out, as immutable sequences. */
  def apply(input: Seq[Float], shape: Shape): IndexedSeq[Float] =
    asJava.forward(input.toArray, shape.toArray: _*).toIndexedSeq

  /** Allocation-free: the first output is copied into `output`. */
  def forwardInto(input: Array[Float], shape: Shape, output: Array[Float]): Unit =
    asJava.forward(input, shape.toArray, output)

  /** NDArrays in (in input order, shared), first output out (close it). */
  def apply(inputs: NDArray*): NDArray = new NDArray(asJava.forward(inputs.map(_.asJava): _*))

  /** NDArrays in, every output out. */
  def run(inputs: NDArray*): Seq[NDArray] = asJava.run(inputs.map(_.asJava): _*).toSeq.map(new NDArray(_))

  /** Sets input `name` from a copy of `values` with `shape`. */
  def setInput(name: String, values: Array[Float], shape: Shape): Unit =
    asJava.setInput(name, values, shape.toArray: _*)
  /** Sets input `name` to `array` without copying: the predictor shares its storage until the input
    * is set again (do not write it during a forward).
    */
  def setInput(name: String, array: NDArray): Unit = asJava.setInput(name, array.asJava)
  /** Runs the model on the inputs set (unset inputs are fed zeros of their inferred shape). */
  def forward(): Unit = asJava.forward()
  /** Output `index` of the last forward as an NDArray (close it). */
  def output(index: Int = 0): NDArray = new NDArray(asJava.output(index))
  /** The shape of output `index` of the last forward. */
  def outputShape(index: Int = 0): Shape = Shape.of(asJava.outputShape(index))

  /** A new predictor of the same model sharing its weights. */
  override def clone(): Predictor = new Predictor(asJava.clone())

  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
  override def toString: String = asJava.toString
}
