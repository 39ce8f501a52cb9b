package org.hybridnet.spark

import java.io.{FileNotFoundException, IOException}
import java.security.MessageDigest

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** A model's two files as bytes (symbol JSON, .params): what the driver broadcasts once. The
  * content hash keys the executors' JVM-wide model cache, so equal bytes load once per executor
  * whichever transformer or SQL function ships them.
  */
final class ModelBytes private (val json: Array[Byte], val params: Array[Byte], val contentHash: String,
                                val description: String) extends Serializable {
  override def toString: String = s"ModelBytes($description, ${json.length + params.length} bytes)"
}

/** Makes [[ModelBytes]] from bytes or reads them from a model's files. */
object ModelBytes {
  /** The bytes of a symbol JSON and a .params file; `description` names them in messages. */
  def apply(json: Array[Byte], params: Array[Byte], description: String): ModelBytes = {
    val digest = MessageDigest.getInstance("SHA-256")
    // Lengths first: the same concatenation split differently is another model.
    digest.update(java.nio.ByteBuffer.allocate(16).putLong(json.length.toLong).putLong(params.length.toLong).array())
    digest.update(json)
    digest.update(params)
    new ModelBytes(json, params, digest.digest().map(b => f"${b & 0xff}%02x").mkString, description)
  }

  /** PREFIX-symbol.json and PREFIX-EEEE.params, MXNet's names of an export. */
  def fileNames(prefix: String, epoch: Int): (String, String) =
    (s"$prefix-symbol.json", f"$prefix-$epoch%04d.params")

  /** Reads PREFIX-symbol.json and PREFIX-EEEE.params through Hadoop's file systems (file:, hdfs:,
    * s3a:, ...; a path without a scheme is on the default file system). A missing or unreadable
    * file is a [[HybridnetSparkException]] naming it.
    */
  def read(prefix: String, epoch: Int, hadoopConf: Configuration): ModelBytes = {
    val (jsonFile, paramsFile) = fileNames(prefix, epoch)
    apply(readFile(jsonFile, hadoopConf), readFile(paramsFile, hadoopConf), s"$jsonFile + $paramsFile")
  }

  /** The length and modification time of both files: what tells a cached copy is stale. */
  private[spark] def stamp(prefix: String, epoch: Int, hadoopConf: Configuration): Seq[(Long, Long)] = {
    val (jsonFile, paramsFile) = fileNames(prefix, epoch)
    Seq(jsonFile, paramsFile).map { file =>
      val status = guarded(file) { val p = new Path(file); p.getFileSystem(hadoopConf).getFileStatus(p) }
      if (status.isDirectory) throw new HybridnetSparkException(s"hybridnet: the model file $file is a directory")
      (status.getLen, status.getModificationTime)
    }
  }

  /** Writes the two files of `model` as DIR/model-symbol.json and DIR/model-0000.params. */
  private[spark] def write(model: ModelBytes, dir: String, hadoopConf: Configuration): String = {
    val prefix = new Path(dir, "model").toString
    val (jsonFile, paramsFile) = fileNames(prefix, 0)
    for ((file, bytes) <- Seq(jsonFile -> model.json, paramsFile -> model.params)) {
      val path = new Path(file)
      val out = path.getFileSystem(hadoopConf).create(path, false)
      try out.write(bytes)
      finally out.close()
    }
    prefix
  }

  private def readFile(file: String, hadoopConf: Configuration): Array[Byte] = guarded(file) {
    val path = new Path(file)
    val fs = path.getFileSystem(hadoopConf)
    val status = fs.getFileStatus(path)
    if (status.isDirectory) throw new HybridnetSparkException(s"hybridnet: the model file $file is a directory")
    if (status.getLen > Int.MaxValue - 16) {
      throw new HybridnetSparkException(s"hybridnet: the model file $file has ${status.getLen} bytes; " +
        "a model is broadcast as a byte array, at most 2 GB per file")
    }
    val in = fs.open(path)
    try in.readAllBytes()
    finally in.close()
  }

  private def guarded[T](file: String)(body: => T): T =
    try body
    catch {
      case e: FileNotFoundException =>
        throw new HybridnetSparkException(s"hybridnet: the model file $file does not exist", e)
      case e: IOException =>
        throw new HybridnetSparkException(s"hybridnet: cannot read the model file $file: ${e.getMessage}", e)
      case e: IllegalArgumentException => // a malformed path or URI
        throw new HybridnetSparkException(s"hybridnet: bad model file name $file: ${e.getMessage}", e)
    }
}

/** A model file, model, or row the transformer cannot use; the message names what and why. */
final class HybridnetSparkException(message: String, cause: Throwable = null)
    extends RuntimeException(message, cause)
