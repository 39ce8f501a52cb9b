package org.hybridnet.scalaapi

import java.nio.file.Path

import scala.collection.immutable.ListMap
import scala.jdk.CollectionConverters._

import org.hybridnet.{Symbol => JSymbol}

/** A graph (MXNet symbol), immutable; written and read as MXNet JSON. */
final class Symbol private[scalaapi] (val asJava: JSymbol) extends AutoCloseable {
  /** The graph as MXNet symbol JSON. */
  def toJson: String = asJava.toJson()
  /** The argument variables (inputs and weights), as MXNet's list_arguments(). */
  def arguments: Seq[String] = asJava.listArguments().asScala.toSeq
  /** The output names, as MXNet's list_outputs(). */
  def outputs: Seq[String] = asJava.listOutputs().asScala.toSeq
  /** The auxiliary states (BatchNorm's running statistics), as list_auxiliary_states(). */
  def auxiliaryStates: Seq[String] = asJava.listAuxiliaryStates().asScala.toSeq
  /** Writes the JSON to `path`. */
  def save(path: Path): Unit = asJava.save(path)
  /** Output `index` alone, as a symbol. */
  def output(index: Int): Symbol = new Symbol(asJava.output(index))

  /** Infers every shape from the known ones. */
  def inferShape(known: (String, Shape)*): Symbol.Shapes = {
    val m = new java.util.LinkedHashMap[String, Array[Long]]()
    known.foreach { case (k, v) => m.put(k, v.toArray) }
    val s = asJava.inferShape(m)
    def conv(x: java.util.Map[String, Array[Long]]): ListMap[String, Shape] =
      ListMap(x.asScala.toSeq.map { case (k, v) => k -> Shape.of(v) }: _*)
    Symbol.Shapes(conv(s.arguments()), conv(s.outputs()), conv(s.auxiliaryStates()))
  }

  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
  override def toString: String = asJava.toString
}

/** Makes [[Symbol]]s. */
object Symbol {
  /** The result of [[Symbol.inferShape]], in graph order. */
  final case class Shapes(
      arguments: ListMap[String, Shape],
      outputs: ListMap[String, Shape],
      auxiliaryStates: ListMap[String, Shape])

  /** A variable (graph input). */
  def variable(name: String): Symbol = new Symbol(JSymbol.`var`(name))

  /** `Symbol("FullyConnected", "num_hidden" -> "2")(data)`; a null name picks one. */
  def apply(op: String, attrs: (String, String)*)(inputs: Symbol*): Symbol =
    create(op, null, attrs: _*)(inputs: _*)

  /** With an explicit node name. */
  def create(op: String, name: String, attrs: (String, String)*)(inputs: Symbol*): Symbol = {
    new Symbol(JSymbol.create(op, toJavaMap(attrs), name, inputs.map(_.asJava): _*))
  }

  /** The outputs of `symbols` as one symbol (MXNet's Group). */
  def group(symbols: Symbol*): Symbol = new Symbol(JSymbol.group(symbols.map(_.asJava): _*))
  /** Parses MXNet symbol JSON (old formats are upgraded). */
  def fromJson(json: String): Symbol = new Symbol(JSymbol.fromJson(json))
  /** Reads a symbol JSON file. */
  def load(path: Path): Symbol = new Symbol(JSymbol.load(path))
}
