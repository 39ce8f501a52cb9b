// A Scala application depending on org.hybridnet:hybridnet-scala_2.13 from the local Maven
// repository (tests/packaging/scala/pom.xml): loads an export and prints its output for IN.npy.
//   java -cp <classpath> App PREFIX IN.npy
import java.nio.file.Path

import scala.util.Using

import org.hybridnet.scalaapi._

object App {
  def main(args: Array[String]): Unit = {
    val y = Using.Manager { use =>
      val model = use(Model.load(args(0), 0))
      val predictor = use(model.predictor())
      val x = use(NDArray.load(Path.of(args(1))))
      val out = use(predictor(x))
      (out.shape, out.toSeq)
    }.get
    println(s"Scala consumer (Maven): output ${y._1}: ${y._2(0)} ${y._2(1)}")
  }
}
