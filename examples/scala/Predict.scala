// Runs an export (hybridnet's or real MXNet's) on .npy inputs and writes its outputs.
//
//   java -cp <classpath> Predict PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy
//
// The inputs feed the model's data inputs in order; OUTPUT.npy gets the first output,
// OUTPUT.K.npy output K of a model with several.
import java.nio.file.Path

import scala.util.{Failure, Success, Using}

import org.hybridnet.scalaapi._

object Predict {
  def main(args: Array[String]): Unit = args match {
    case Array(prefix, epoch, input, output) if epoch.forall(_.isDigit) =>
      val result = Using.Manager { use =>
        val model = use(Model.load(prefix, epoch.toInt))
        val predictor = use(model.predictor())
        val xs = input.split(",").toSeq.map(file => use(NDArray.load(Path.of(file))))
        val ys = predictor.run(xs: _*).map(use(_))
        println(s"inputs ${model.inputNames.mkString(", ")} <- $input")
        for ((y, k) <- ys.zipWithIndex) {
          val path = if (k == 0) output else output.stripSuffix(".npy") + s".$k.npy"
          y.save(Path.of(path))
          println(s"wrote ${model.outputNames(k)} ${y.shape} to $path")
        }
      }
      result match {
        case Success(_) =>
        case Failure(e: HybridnetException) =>
          System.err.println(s"Predict: ${e.getMessage}")
          sys.exit(1)
        case Failure(e) => throw e
      }
    case _ =>
      System.err.println("usage: Predict PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy")
      sys.exit(2)
  }
}
