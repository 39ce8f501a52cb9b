package org.hybridnet.spark

import java.nio.{ByteBuffer, ByteOrder}
import java.util.concurrent.{ConcurrentHashMap, ScheduledFuture, ScheduledThreadPoolExecutor, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.spark.TaskContext
import org.apache.spark.sql.hybridnet.SparkInternals
import org.hybridnet.{Hybridnet, Model, Predictor}
import org.slf4j.LoggerFactory

/** The models loaded in this JVM (an executor's, or the driver's in local mode), shared by every
  * task, partition, stage and job: each model (by content hash) is loaded once, and each running
  * task borrows a predictor of it (predictors are returned when the task ends and reused by later
  * tasks). A model is released once no broadcast carrying it is alive in this JVM any more, i.e.
  * after `Broadcast.destroy()` ([[HybridnetTransformer.release]]) or when Spark stops; a
  * background thread checks every [[CheckIntervalMs]] while models are loaded.
  */
object ModelCache {
  /** How often loaded models are checked against their broadcasts. */
  val CheckIntervalMs: Long = 1000

  /** Models loaded by this JVM since it started (a model is loaded again only after a release). */
  def loads: Long = loadCount.get()

  /** Predictors created by this JVM since it started (reused across tasks, one per running task). */
  def predictorsCreated: Long = predictorCount.get()

  /** The content hashes ([[ModelBytes.contentHash]]) of the models loaded now. */
  def loadedModels: Set[String] = entries.values().asScala.filter(_.loaded).map(_.hash).toSet

  /** Releases at once the models whose broadcasts are gone (otherwise done periodically). */
  def releaseUnused(): Unit = entries.values().asScala.foreach(releaseIfUnused)

  /** A predictor of `spec`'s model for the current task: borrowed from the pool (or created) and
    * given back when the task completes. Outside a task (e.g. a SQL function Spark folds on the
    * driver) use [[withPredictor]].
    */
  private[spark] def taskPredictor(spec: ScoringSpec): PredictorSlot = {
    val task = TaskContext.get()
    require(task != null, "hybridnet: taskPredictor outside a Spark task")
    val (entry, slot) = borrow(spec)
    task.addTaskCompletionListener[Unit](_ => entry.giveBack(slot))
    slot
  }

  /** Runs `f` with a predictor borrowed for its duration. */
  private[spark] def withPredictor[T](spec: ScoringSpec)(f: PredictorSlot => T): T = {
    val (entry, slot) = borrow(spec)
    try f(slot)
    finally entry.giveBack(slot)
  }

  private val log = LoggerFactory.getLogger(getClass)
  private val loadCount = new AtomicLong
  private val predictorCount = new AtomicLong
  private val entries = new ConcurrentHashMap[String, Entry]

  /** One model: loaded at most once, its idle predictors and the broadcasts carrying it. Idle
    * predictors are kept by the inputs they were fed: a predictor keeps its inputs, so one fed
    * fewer inputs later would run on stale values instead of the zeros unset inputs get.
    */
  private final class Entry(val hash: String) {
    private var model: Model = _
    private val idle = mutable.Map.empty[String, java.util.ArrayDeque[PredictorSlot]]
    private val broadcastIds = mutable.Set.empty[Long]
    @volatile var released = false

    def addBroadcast(id: Long): Unit = synchronized { broadcastIds += id }

    def loaded: Boolean = synchronized { model != null }

    /** A predictor for inputs `feeds`, loading the model first if no task did yet; None once
      * released.
      */
    def borrow(bytes: => ModelBytes, feeds: String): Option[PredictorSlot] = synchronized {
      if (released) None
      else {
        if (model == null) model = load(bytes)
        val pool = idle.getOrElseUpdate(feeds, new java.util.ArrayDeque[PredictorSlot])
        if (pool.isEmpty) {
          predictorCount.incrementAndGet()
          Some(new PredictorSlot(model.newPredictor(), feeds))
        } else Some(pool.pop())
      }
    }

    def giveBack(slot: PredictorSlot): Unit = synchronized {
      if (released) slot.predictor.close() else idle(slot.feeds).push(slot)
    }

    /** Forgets dead broadcasts; releases the model when none is left. */
    def releaseIfUnused(): Boolean = synchronized {
      broadcastIds.filterInPlace(SparkInternals.broadcastAlive)
      if (broadcastIds.isEmpty && !released) {
        released = true
        idle.values.foreach(_.asScala.foreach(_.predictor.close()))
        idle.clear()
        if (model != null) {
          model.close() // predictors still borrowed keep the weights until they are given back
          model = null
          log.info(s"hybridnet: released model $hash")
        }
      }
      released
    }

    private def load(bytes: ModelBytes): Model = {
      ExecutorSetup.ensure()
      val start = System.nanoTime()
      val loaded =
        try Model.fromBytes(bytes.json, bytes.params)
        catch {
          case e: RuntimeException => throw new HybridnetSparkException(
              s"hybridnet: the model ${bytes.description} does not load: ${e.getMessage}", e)
        }
      loadCount.incrementAndGet()
      log.info(f"hybridnet: loaded model $hash (${bytes.description}) in ${(System.nanoTime() - start) / 1e6}%.0f ms")
      loaded
    }
  }

  private def borrow(spec: ScoringSpec): (Entry, PredictorSlot) = {
    val bc = spec.model
    val bytes = bc.value
    val feeds = spec.inputs.map(_.modelInput).mkString(",")
    var result: (Entry, PredictorSlot) = null
    while (result == null) {
      val entry = entries.compute(bytes.contentHash, (hash, existing) => {
        val e = if (existing == null || existing.released) new Entry(hash) else existing
        e.addBroadcast(bc.id)
        e
      })
      ensureChecking()
      entry.borrow(bytes, feeds).foreach(p => result = (entry, p)) // released meanwhile: take a new entry
    }
    result
  }

  private def releaseIfUnused(entry: Entry): Unit =
    if (entry.releaseIfUnused()) entries.remove(entry.hash, entry)

  /** The checking thread; it ends when idle (no model loaded) and is started again on demand. */
  private lazy val checker: ScheduledThreadPoolExecutor = {
    val pool = new ScheduledThreadPoolExecutor(1, { (r: Runnable) =>
      val t = new Thread(r, "hybridnet-model-cache")
      t.setDaemon(true)
      t
    })
    pool.setKeepAliveTime(CheckIntervalMs, TimeUnit.MILLISECONDS)
    pool.allowCoreThreadTimeOut(true)
    pool
  }
  private var checking: ScheduledFuture[_] = _

  /** Starts the periodic check (it stops itself when no model is left). */
  private def ensureChecking(): Unit = synchronized {
    if (checking == null) {
      checking = checker.scheduleWithFixedDelay(() => check(), CheckIntervalMs, CheckIntervalMs, TimeUnit.MILLISECONDS)
    }
  }

  private def check(): Unit = {
    try releaseUnused()
    catch { case e: RuntimeException => log.warn("hybridnet: model cache check failed", e) }
    synchronized {
      if (entries.isEmpty && checking != null) {
        checking.cancel(false)
        checking = null
      }
    }
  }
}

/** A predictor and the direct buffers its inputs are written to (the predictor shares them, no
  * copy), lent together so a task allocates neither; `feeds` names the inputs it is fed.
  */
private[spark] final class PredictorSlot(val predictor: Predictor, val feeds: String) {
  private val buffers = mutable.Map.empty[Int, ByteBuffer]

  /** A native-order direct buffer of at least `floats` values for input `index`. */
  def inputBuffer(index: Int, floats: Int): ByteBuffer = {
    val current = buffers.get(index).filter(_.capacity() >= floats.toLong * 4)
    current.getOrElse {
      val fresh = ByteBuffer.allocateDirect(Math.multiplyExact(floats, 4)).order(ByteOrder.nativeOrder())
      buffers(index) = fresh
      fresh
    }
  }
}

/** Settings of the executor JVMs, from the Spark configuration (set with `--conf`):
  *
  *  - `spark.hybridnet.native.extractDir`: where the JAR's native library is extracted (it
  *    becomes `-Dhybridnet.native.extract.dir` unless that is set; for executors whose `/tmp` is
  *    mounted `noexec`). It applies when the library is not loaded yet in that JVM.
  *  - `spark.hybridnet.numThreads` (default 1): OpenBLAS threads of the JVM. Spark already runs
  *    one task per core, so more threads per task oversubscribe the cores.
  */
object ExecutorSetup {
  /** The configuration key of the native library's extraction folder. */
  val ExtractDirKey = "spark.hybridnet.native.extractDir"
  /** The configuration key of the OpenBLAS thread count. */
  val NumThreadsKey = "spark.hybridnet.numThreads"

  private lazy val applied: Unit = {
    val conf = Option(org.apache.spark.SparkEnv.get).map(_.conf)
    for (dir <- conf.flatMap(_.getOption(ExtractDirKey)) if System.getProperty("hybridnet.native.extract.dir") == null) {
      System.setProperty("hybridnet.native.extract.dir", dir)
    }
    val threads = conf.flatMap(_.getOption(NumThreadsKey)).getOrElse("1")
    Hybridnet.setNumThreads(threads.toIntOption.filter(_ > 0).getOrElse(
      throw new IllegalArgumentException(s"hybridnet: $NumThreadsKey must be a positive integer, got '$threads'")))
  }

  /** Applies the settings once per JVM, before the first native call of hybridnet-spark. */
  def ensure(): Unit = applied
}
