package org.hybridnet.scalaapi

import scala.jdk.CollectionConverters._

import org.hybridnet.{Profiler => JProfiler}

/** MXNet's mx.profiler: a Chrome trace of every op call and the aggregate table per op type.
  *
  * {{{
  * profiler.setConfig("profile_all" -> "True", "aggregate_stats" -> "True",
  *                    "filename" -> "trace.json")
  * profiler.setState("run")
  * net(x)
  * profiler.setState("stop")
  * profiler.dump()
  * println(profiler.dumps())
  * }}}
  */
object profiler {

  /** Sets options by MXNet's set_config keywords, values as strings ("True", "False"). */
  def setConfig(options: (String, String)*): Unit = JProfiler.setConfig(options.toMap.asJava)

  /** "run" or "stop". */
  def setState(state: String): Unit = JProfiler.setState(state)

  /** "run" or "stop". */
  def state: String = JProfiler.state()

  /** Stops recording until `resume()`, the state staying "run". */
  def pause(): Unit = JProfiler.pause()

  /** Records again after `pause()`. */
  def resume(): Unit = JProfiler.resume()

  /** Writes the events since the last dump to the trace file; `finished` completes it. */
  def dump(finished: Boolean = true): Unit = JProfiler.dump(finished)

  /** The aggregate statistics: `format` "table" or "json", sorted by `sortBy` ("total", "avg",
    * "min", "max", "count"), descending unless `ascending`; `reset` clears them afterwards.
    */
  def dumps(reset: Boolean = false, format: String = "table", sortBy: String = "total",
      ascending: Boolean = false): String = JProfiler.dumps(reset, format, sortBy, ascending)

  /** Runs `body` with the names of the ops this thread records prefixed with `name`. */
  def scope[T](name: String)(body: => T): T = {
    val s = JProfiler.scope(name)
    try body
    finally s.close()
  }
}
