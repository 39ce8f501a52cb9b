package org.hybridnet.scalaapi

import java.nio.file.Path

import scala.collection.immutable.ListMap
import scala.jdk.CollectionConverters._

import org.hybridnet.{
  Activation => JActivation,
  Block => JBlock,
  Dense => JDense,
  Dropout => JDropout,
  Flatten => JFlatten,
  HybridBlock => JHybridBlock,
  HybridSequential => JHybridSequential,
  Layer => JLayer,
  Loss => JLoss,
  Sequential => JSequential,
  SymbolBlock => JSymbolBlock
}

/** A Gluon block. `net(x)` runs it (eagerly, or through its cached graph once hybridized).
  * Containers close the blocks added to them.
  */
sealed abstract class Block(val asJava: JBlock) extends AutoCloseable {

  /** Initializes every parameter ("uniform", "normal", "xavier", "zeros", "ones"); without a seed
    * the next seed of [[Hybridnet.seed]]'s sequence is used.
    */
  def initialize(initializer: String = "uniform", seed: Option[Long] = None): this.type = {
    seed match {
      case Some(s) => asJava.initialize(initializer, s)
      case None    => asJava.initialize(initializer)
    }
    this
  }

  /** Runs the block; returns its first output (close it). */
  def apply(inputs: NDArray*): NDArray = new NDArray(asJava.forward(inputs.map(_.asJava): _*))

  /** Runs the block; returns every output (close each). */
  def forwardAll(inputs: NDArray*): Seq[NDArray] =
    asJava.forwardAll(inputs.map(_.asJava): _*).toSeq.map(new NDArray(_))

  /** The block's name: its prefix without the trailing underscore ("hybridsequential0"). */
  def name: String = asJava.name()

  /** The initialized parameters by full name, as copies. */
  def parameters: ListMap[String, IndexedSeq[Float]] =
    ListMap(asJava.parameters().asScala.toSeq.map { case (k, v) => k -> v.toIndexedSeq }: _*)

  /** Writes the parameters as MXNet 1.9's save_parameters does (structural names: "0.weight"). */
  def saveParameters(path: Path): Unit = asJava.saveParameters(path)
  /** Loads a save_parameters file (or an export's params); missing, extra and mis-shaped parameters
    * are errors unless allowed.
    */
  def loadParameters(path: Path, allowMissing: Boolean = false, ignoreExtra: Boolean = false): Unit =
    asJava.loadParameters(path, allowMissing, ignoreExtra)

  /** The full names of the tree's parameters, in registration order. */
  def parameterNames: Seq[String] = asJava.parameterNames().asScala.toSeq

  /** The tree's parameter `name` (full name): value, gradient and training attributes. */
  def parameter(name: String): Parameter = new Parameter(asJava.parameter(name))

  /** Every parameter of the tree, in [[parameterNames]] order. */
  def collectParameters: Seq[Parameter] =
    asJava.collectParameters().asScala.toSeq.map(new Parameter(_))

  /** Zeroes the gradient buffers of every parameter. */
  def zeroGrad(): Unit = asJava.zeroGrad()

  /** Sets grad_req ("write", "add", "null") of every parameter of the tree. */
  def setGradReq(gradReq: String): Unit = asJava.setGradReq(gradReq)

  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
  override def toString: String = asJava.toString
}

/** A block that can be hybridized, traced and exported. */
sealed abstract class HybridBlock(override val asJava: JHybridBlock) extends Block(asJava) {

  /** Turns hybridization on (or off): the next call traces one graph and caches an executor. */
  def hybridize(active: Boolean = true, staticAlloc: Boolean = false, staticShape: Boolean = false)
      : this.type = {
    asJava.hybridize(active, staticAlloc, staticShape)
    this
  }

  /** Writes PREFIX-symbol.json and PREFIX-EEEE.params (hybridize and run once first). */
  def `export`(prefix: String, epoch: Int = 0): Unit = asJava.export(prefix, epoch)

  /** The symbolic program (inputs named "data", or "data0", "data1", ...). */
  def trace(numInputs: Int = 1): Symbol = new Symbol(asJava.trace(numInputs))
}

/** A hybridizable stack: `HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2))`. */
final class HybridSequential private (override val asJava: JHybridSequential)
    extends HybridBlock(asJava) {
  private var blocks = Vector.empty[HybridBlock]

  /** Appends blocks (closed with this container). */
  def add(children: HybridBlock*): this.type = {
    asJava.add(children.map(_.asJava): _*)
    blocks ++= children
    this
  }

  /** The blocks added, in order. */
  def children: Seq[HybridBlock] = blocks
}

/** Makes [[HybridSequential]]s. */
object HybridSequential {
  /** `HybridSequential(Dense(2), ...)`: a container holding `children` in order. */
  def apply(children: HybridBlock*): HybridSequential =
    new HybridSequential(new JHybridSequential()).add(children: _*)

  /** With a name prefix: `HybridSequential.named("net_")(Dense(2))`. */
  def named(prefix: String)(children: HybridBlock*): HybridSequential =
    new HybridSequential(new JHybridSequential(prefix)).add(children: _*)
}

/** A stack that always runs eagerly. */
final class Sequential private (override val asJava: JSequential) extends Block(asJava) {
  /** Appends blocks (closed with this container). */
  def add(children: Block*): this.type = {
    asJava.add(children.map(_.asJava): _*)
    this
  }
}

/** Makes [[Sequential]]s. */
object Sequential {
  /** `Sequential(a, b)`: a container holding `children` in order. */
  def apply(children: Block*): Sequential = new Sequential(new JSequential()).add(children: _*)
}

/** A fully connected layer. */
final class Dense private (override val asJava: JDense) extends HybridBlock(asJava)

/** Makes [[Dense]] layers. */
object Dense {
  /** `Dense(2)`, `Dense(256, "relu")`, `Dense(64, inUnits = 512, useBias = false)`. */
  def apply(
      units: Int,
      activation: String = "",
      useBias: Boolean = true,
      flatten: Boolean = true,
      inUnits: Int = 0,
      prefix: String = ""): Dense = {
    val options = new java.util.LinkedHashMap[String, String]()
    if (!useBias) options.put("use_bias", "False")
    if (!flatten) options.put("flatten", "False")
    if (inUnits > 0) options.put("in_units", inUnits.toString)
    if (prefix.nonEmpty) options.put("prefix", prefix)
    new Dense(new JDense(units, if (activation.isEmpty) null else activation, options))
  }
}

/** An element-wise activation. */
final class Activation private (override val asJava: JActivation) extends HybridBlock(asJava)

/** Makes [[Activation]] layers. */
object Activation {
  /** `Activation("relu")`: relu, sigmoid, tanh, softrelu or softsign. */
  def apply(activation: String): Activation = new Activation(new JActivation(activation))
}

/** Dropout (the identity at inference). */
final class Dropout private (override val asJava: JDropout) extends HybridBlock(asJava)

/** Makes [[Dropout]] layers. */
object Dropout {
  /** `Dropout(0.5)`: drops with probability `rate` (0 to 1) in training. */
  def apply(rate: Double): Dropout = new Dropout(new JDropout(rate))
}

/** Flattens every dimension after the first. */
final class Flatten private (override val asJava: JFlatten) extends HybridBlock(asJava)

/** Makes [[Flatten]] layers. */
object Flatten {
  /** `Flatten()`. */
  def apply(): Flatten = new Flatten(new JFlatten())
}

/** A layer of any kind the native library makes, by MXNet's class name. */
final class Layer private (override val asJava: JLayer) extends HybridBlock(asJava)

/** Makes [[Layer]]s. */
object Layer {
  /** `Layer("Conv2D", "channels" -> "32", "kernel_size" -> "3")`: MXNet's keyword arguments as
    * text; an unknown kind is a `HybridnetException.NotFound` listing the kinds.
    */
  def apply(kind: String, attrs: (String, String)*): Layer =
    new Layer(new JLayer(kind, toJavaMap(attrs)))
}

/** A loss of MXNet's gluon.loss by class name: `loss(pred, label)` gives the per-sample loss. */
final class Loss private (override val asJava: JLoss) extends HybridBlock(asJava)

/** Makes [[Loss]]es. */
object Loss {
  /** `Loss("SoftmaxCrossEntropyLoss")`, `Loss("L1Loss", "weight" -> "2")`; an unknown kind is a
    * `HybridnetException.NotFound` listing the kinds.
    */
  def apply(kind: String, attrs: (String, String)*): Loss =
    new Loss(new JLoss(kind, toJavaMap(attrs)))
}

/** An export (hybridnet's or real MXNet's) imported as a block. */
final class SymbolBlock private (override val asJava: JSymbolBlock) extends HybridBlock(asJava)

/** Imports exported models as blocks. */
object SymbolBlock {
  /** Imports PREFIX-symbol.json + PREFIX-EEEE.params with the data input "data". */
  def imports(prefix: String, epoch: Int = 0, inputNames: Seq[String] = Seq("data")): SymbolBlock =
    new SymbolBlock(
      JSymbolBlock.imports(
        Path.of(s"$prefix-symbol.json"),
        inputNames.asJava,
        Path.of(f"$prefix-$epoch%04d.params")))
}
