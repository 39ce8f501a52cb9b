package org.hybridnet.scalaapi

import org.hybridnet.{Hybridnet => J}

/** Library-wide settings and facts. */
object Hybridnet {
  /** The native library's version. */
  def version: String = J.version()

  /** The native library's ABI generation. */
  def abiVersion: Int = J.abiVersion()

  /** The number of BLAS threads (process-wide). */
  def numThreads: Int = J.numThreads()

  /** Sets the number of BLAS threads (1 is fastest at batch 1). */
  def setNumThreads(n: Int): Unit = J.setNumThreads(n)

  /** Seeds the native generator and the seeds of `initialize()` calls without one. */
  def seed(seed: Long): Unit = J.seed(seed)

  /** Native objects created and not yet freed (a leak-check aid). */
  def liveObjects: Long = J.liveObjects()
}
