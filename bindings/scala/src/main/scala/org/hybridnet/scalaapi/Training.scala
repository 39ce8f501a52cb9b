package org.hybridnet.scalaapi

import java.nio.file.Path

import scala.collection.immutable.ListMap
import scala.jdk.CollectionConverters._

import org.hybridnet.{
  Autograd => JAutograd,
  DataLoader => JDataLoader,
  LRScheduler => JLRScheduler,
  Metric => JMetric,
  NDArray => JNDArray,
  Optimizer => JOptimizer,
  Parameter => JParameter,
  Trainer => JTrainer
}

/** MXNet's autograd: `autograd.record { ... }` records the eager ops of its body on this thread.
  *
  * {{{
  * x.attachGrad()
  * val y = autograd.record { Op("exp")(x).head }
  * y.backward()
  * Using.resource(x.grad) { g => g.toSeq }      // exp(x)
  * }}}
  */
object autograd {
  /** Runs `body` recording, in training mode unless `trainMode` is false; restores the flags. */
  def record[T](body: => T): T = within(JAutograd.record())(body)

  /** Runs `body` recording, in training mode when `trainMode`. */
  def record[T](trainMode: Boolean)(body: => T): T = within(JAutograd.record(trainMode))(body)

  /** Runs `body` without recording (nor training, unless `trainMode`). */
  def pause[T](trainMode: Boolean = false)(body: => T): T = within(JAutograd.pause(trainMode))(body)

  /** Runs `body` in training mode, recording as before. */
  def trainMode[T](body: => T): T = within(JAutograd.trainMode())(body)

  /** Runs `body` in predict mode, recording as before. */
  def predictMode[T](body: => T): T = within(JAutograd.predictMode())(body)

  /** Whether this thread records. */
  def isRecording: Boolean = JAutograd.isRecording()

  /** Whether eager ops on this thread run in training mode. */
  def isTraining: Boolean = JAutograd.isTraining()

  /** The gradients of `heads` (ones as head gradients) into their variables' gradient buffers. */
  def backward(heads: NDArray*): Unit = JAutograd.backward(heads.map(_.asJava): _*)

  /** MXNet's `autograd.backward(heads, head_grads, retain_graph, train_mode)`. */
  def backward(heads: Seq[NDArray], headGrads: Seq[NDArray], retainGraph: Boolean,
      trainMode: Boolean): Unit =
    JAutograd.backward(javaArrays(heads), javaArrays(headGrads), retainGraph, trainMode)

  /** The gradients of `heads` with respect to `variables`, as new arrays (close each). */
  def grad(heads: Seq[NDArray], variables: Seq[NDArray], headGrads: Seq[NDArray] = Nil,
      retainGraph: Boolean = false, createGraph: Boolean = false,
      trainMode: Boolean = true): Seq[NDArray] =
    JAutograd
      .grad(javaArrays(heads), javaArrays(variables),
        if (headGrads.isEmpty) null else javaArrays(headGrads), retainGraph, createGraph, trainMode)
      .toSeq
      .map(NDArray.fromJava)

  private def javaArrays(arrays: Seq[NDArray]): Array[JNDArray] = arrays.map(_.asJava).toArray

  private def within[T](scope: JAutograd.Scope)(body: => T): T =
    try body
    finally scope.close()
}

/** A parameter of a block tree (see `Block.parameter`): calls fail once the block is closed. */
final class Parameter private[scalaapi] (val asJava: JParameter) {
  /** The full name. */
  def name: String = asJava.name()
  /** The value, sharing the parameter's storage (close it). */
  def data: NDArray = NDArray.fromJava(asJava.data())
  /** The gradient buffer, sharing its storage (close it). */
  def grad: NDArray = NDArray.fromJava(asJava.grad())
  /** Zeroes the gradient buffer. */
  def zeroGrad(): Unit = asJava.zeroGrad()
  /** MXNet's grad_req: "write", "add" or "null". */
  def gradReq: String = asJava.gradReq()
  /** Sets grad_req. */
  def gradReq_=(value: String): Unit = asJava.setGradReq(value)
  /** The learning-rate factor. */
  def lrMult: Double = asJava.lrMult()
  /** Sets the learning-rate factor. */
  def lrMult_=(value: Double): Unit = asJava.setLrMult(value)
  /** The weight-decay factor. */
  def wdMult: Double = asJava.wdMult()
  /** Sets the weight-decay factor. */
  def wdMult_=(value: Double): Unit = asJava.setWdMult(value)
  override def toString: String = asJava.toString
}

/** An optimizer by registered name ("sgd", "adam", ...), hyper-parameters as Python literals. */
final class Optimizer private[scalaapi] (val asJava: JOptimizer) extends AutoCloseable {
  /** The learning rate. */
  def learningRate: Float = asJava.learningRate()
  /** Sets the learning rate (an error while a scheduler is set). */
  def learningRate_=(value: Float): Unit = asJava.setLearningRate(value)
  /** Sets (or, with `None`, removes) the learning-rate scheduler. */
  def setLRScheduler(scheduler: Option[LRScheduler]): Unit =
    asJava.setLRScheduler(scheduler.map(_.asJava).orNull)
  /** The hyper-parameters by MXNet's names. */
  def hyperParameters: ListMap[String, String] = ListMap(asJava.hyperParameters().asScala.toSeq: _*)
  override def close(): Unit = asJava.close()
}

/** Makes [[Optimizer]]s. */
object Optimizer {
  /** `Optimizer("sgd", "learning_rate" -> "0.1", "momentum" -> "0.9")`. */
  def apply(name: String, hyperParameters: (String, String)*): Optimizer =
    new Optimizer(new JOptimizer(name, toJavaMap(hyperParameters)))
}

/** A learning-rate scheduler ("factor", "multifactor", "poly", "cosine"). */
final class LRScheduler private[scalaapi] (val asJava: JLRScheduler) extends AutoCloseable {
  /** The learning rate at update count `numUpdate`. */
  def apply(numUpdate: Int): Float = asJava.learningRate(numUpdate)
  override def close(): Unit = asJava.close()
}

/** Makes [[LRScheduler]]s. */
object LRScheduler {
  /** `LRScheduler("factor", "step" -> "10", "factor" -> "0.5")`. */
  def apply(name: String, params: (String, String)*): LRScheduler =
    new LRScheduler(new JLRScheduler(name, toJavaMap(params)))
}

/** MXNet's gluon.Trainer over every parameter of a block tree. */
final class Trainer private[scalaapi] (val asJava: JTrainer) extends AutoCloseable {
  /** One update from the gradients of the last backward, scaled by 1 / `batchSize`. */
  def step(batchSize: Int, ignoreStaleGrad: Boolean = false): Unit =
    asJava.step(batchSize, ignoreStaleGrad)
  /** MXNet's allreduce_grads (one context: nothing to sum). */
  def allreduceGrads(): Unit = asJava.allreduceGrads()
  /** The update half of [[step]]. */
  def update(batchSize: Int, ignoreStaleGrad: Boolean = false): Unit =
    asJava.update(batchSize, ignoreStaleGrad)
  /** The learning rate. */
  def learningRate: Float = asJava.learningRate()
  /** Sets the learning rate. */
  def learningRate_=(value: Float): Unit = asJava.setLearningRate(value)
  /** Writes MXNet's .states file. */
  def saveStates(path: Path): Unit = asJava.saveStates(path)
  /** Reads a .states file. */
  def loadStates(path: Path): Unit = asJava.loadStates(path)
  override def close(): Unit = asJava.close()
  /** Whether `close()` was called. */
  def isClosed: Boolean = asJava.isClosed
}

/** Makes [[Trainer]]s. */
object Trainer {
  /** `Trainer(net, "adam", "learning_rate" -> "0.002")`: the trainer closes its optimizer. */
  def apply(block: Block, optimizer: String, hyperParameters: (String, String)*): Trainer =
    new Trainer(new JTrainer(block.asJava, optimizer, toJavaMap(hyperParameters)))

  /** A trainer sharing `optimizer` (which stays the caller's to close). */
  def apply(block: Block, optimizer: Optimizer): Trainer =
    new Trainer(new JTrainer(block.asJava, optimizer.asJava))
}

/** An evaluation metric by MXNet's name ("acc", "mse", "composite", ...). */
final class Metric private[scalaapi] (val asJava: JMetric) extends AutoCloseable {
  /** Adds one batch: `labels(i)` are the labels of `preds(i)`. */
  def update(labels: Seq[NDArray], preds: Seq[NDArray]): Unit =
    asJava.update(labels.map(_.asJava).toArray, preds.map(_.asJava).toArray)
  /** Adds one batch of one output. */
  def update(label: NDArray, pred: NDArray): Unit = asJava.update(label.asJava, pred.asJava)
  /** The readings by name (MXNet's get()). */
  def get: ListMap[String, Double] =
    ListMap(asJava.get().asScala.toSeq.map { case (k, v) => k -> v.doubleValue }: _*)
  /** The first reading's value. */
  def value: Double = asJava.value()
  /** Clears the statistics (local ones only with `localOnly`). */
  def reset(localOnly: Boolean = false): Unit =
    if (localOnly) asJava.resetLocal() else asJava.reset()
  override def close(): Unit = asJava.close()
}

/** Makes [[Metric]]s. */
object Metric {
  /** `Metric("acc")`, `Metric("top_k_acc", "top_k" -> "5")`. */
  def apply(name: String, args: (String, String)*): Metric =
    new Metric(new JMetric(name, toJavaMap(args)))
}

/** Batches of rows of in-memory arrays (MXNet's DataLoader over an ArrayDataset); each
  * traversal is an epoch (a new order when shuffling). The batches are new arrays: close them.
  */
final class DataLoader private[scalaapi] (val asJava: JDataLoader)
    extends Iterable[Seq[NDArray]]
    with AutoCloseable {
  override def iterator: Iterator[Seq[NDArray]] =
    asJava.iterator().asScala.map(_.toSeq.map(NDArray.fromJava))
  /** The number of batches of an epoch. */
  def numBatches: Long = asJava.numBatches()
  override def close(): Unit = asJava.close()
}

/** Makes [[DataLoader]]s. */
object DataLoader {
  /** A loader over `arrays` (shared, not copied); `lastBatch`: "keep", "discard" or "rollover". */
  def apply(arrays: Seq[NDArray], batchSize: Long, shuffle: Boolean = false,
      lastBatch: String = "keep", seed: Long = 0): DataLoader =
    new DataLoader(
      new JDataLoader(arrays.map(_.asJava).toArray, batchSize, shuffle, lastBatch, seed))
}
