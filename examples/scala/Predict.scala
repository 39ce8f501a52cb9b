// Runs an export (hybridnet's or real MXNet's) on a .npy input and writes the first output.
//
//   java -cp <classpath> Predict PREFIX EPOCH INPUT.npy OUTPUT.npy
import java.nio.file.Path

import scala.util.{Failure, Success, Using}

import org.hybridnet.scalaapi._

object Predict {
  def main(args: Array[String]): Unit = args match {
    case Array(prefix, epoch, input, output) if epoch.forall(_.isDigit) =>
      val result = Using.Manager { use =>
        val model = use(Model.load(prefix, epoch.toInt))
        val predictor = use(model.predictor())
        val x = use(NDArray.load(Path.of(input)))
        val y = use(predictor(x))
        y.save(Path.of(output))
        println(s"inputs ${model.inputNames.mkString(", ")} <- ${x.shape} from $input")
        println(s"wrote ${model.outputNames.head} ${y.shape} to $output")
      }
      result match {
        case Success(_) =>
        case Failure(e: HybridnetException) =>
          System.err.println(s"Predict: ${e.getMessage}")
          sys.exit(1)
        case Failure(e) => throw e
      }
    case _ =>
      System.err.println("usage: Predict PREFIX EPOCH INPUT.npy OUTPUT.npy")
      sys.exit(2)
  }
}
