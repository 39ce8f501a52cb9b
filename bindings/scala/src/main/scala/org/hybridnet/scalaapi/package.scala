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
  type HybridnetException = org.hybridnet.HybridnetException
  type Status = org.hybridnet.Status

  /** The categories of [[HybridnetException]]: `catch { case e: HybridnetException.Shape => }`. */
  object HybridnetException {
    type InvalidArgument = org.hybridnet.HybridnetException.InvalidArgument
    type Shape = org.hybridnet.HybridnetException.Shape
    type DType = org.hybridnet.HybridnetException.DType
    type NotFound = org.hybridnet.HybridnetException.NotFound
    type IO = org.hybridnet.HybridnetException.IO
    type Format = org.hybridnet.HybridnetException.Format
    type Unsupported = org.hybridnet.HybridnetException.Unsupported
    type Untraceable = org.hybridnet.HybridnetException.Untraceable
    type OutOfMemory = org.hybridnet.HybridnetException.OutOfMemory
    type Internal = org.hybridnet.HybridnetException.Internal
  }
}
