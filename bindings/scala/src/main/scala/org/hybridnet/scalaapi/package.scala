package org.hybridnet

/** The Scala API of hybridnet: immutable [[Shape]]s, Scala collections in and out, `Using`-friendly
  * resources and a small DSL over the Java binding (org.hybridnet), which loads the native library
  * from its JAR.
  *
  * {{{
  * import org.hybridnet.scalaapi._
  * import scala.util.Using
  *
  * Using.resources(HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2)),
  *                 NDArray(Array.fill(512)(0.1f), Shape(1, 512))) { (net, x) =>
  *   net.initialize()
  *   net.hybridize()
  *   Using.resource(net(x)) { y => println(y.toSeq) }
  *   net.export("my_mlp")
  * }
  * }}}
  *
  * Errors of the native library are [[HybridnetException]]s (one subclass per category, e.g.
  * `HybridnetException.Shape`), a call after `close()` is an `IllegalStateException`.
  */
package object scalaapi {
  /** Key-value pairs as the Java API's ordered map. */
  private[scalaapi] def toJavaMap(
      pairs: Iterable[(String, String)]): java.util.Map[String, String] = {
    val m = new java.util.LinkedHashMap[String, String]()
    pairs.foreach { case (k, v) => m.put(k, v) }
    m
  }

  /** An error of the native library (the Java binding's class). */
  type HybridnetException = org.hybridnet.HybridnetException
  /** The status categories of the C API (the Java binding's enum). */
  type Status = org.hybridnet.Status

  // One alias per hn_status category of c_api.h, with Java's class names: the test
  // bindings.scala_status_aliases (bindings/scala/cmake/CheckStatusAliases.cmake) fails otherwise.
  /** The categories of [[HybridnetException]]: `catch { case e: HybridnetException.Shape => }`. */
  object HybridnetException {
    /** The category HN_ERR_INVALID_ARGUMENT of c_api.h. */
    type InvalidArgument = org.hybridnet.HybridnetException.InvalidArgument
    /** The category HN_ERR_SHAPE. */
    type Shape = org.hybridnet.HybridnetException.Shape
    /** The category HN_ERR_DTYPE. */
    type DType = org.hybridnet.HybridnetException.DType
    /** The category HN_ERR_NOT_FOUND. */
    type NotFound = org.hybridnet.HybridnetException.NotFound
    /** The category HN_ERR_IO. */
    type IO = org.hybridnet.HybridnetException.IO
    /** The category HN_ERR_FORMAT. */
    type Format = org.hybridnet.HybridnetException.Format
    /** The category HN_ERR_UNSUPPORTED. */
    type Unsupported = org.hybridnet.HybridnetException.Unsupported
    /** The category HN_ERR_UNTRACEABLE. */
    type Untraceable = org.hybridnet.HybridnetException.Untraceable
    /** The category HN_ERR_OUT_OF_MEMORY. */
    type OutOfMemory = org.hybridnet.HybridnetException.OutOfMemory
    /** The category HN_ERR_INTERNAL. */
    type Internal = org.hybridnet.HybridnetException.Internal
  }
}
