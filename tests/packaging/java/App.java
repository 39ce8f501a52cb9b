// A Java application depending on org.hybridnet:hybridnet from the local Maven repository
// (tests/packaging/java/pom.xml): loads an export and prints its output for IN.npy.
//   java -cp <classpath> App PREFIX IN.npy
import java.nio.file.Path;
import java.util.Arrays;
import org.hybridnet.Hybridnet;
import org.hybridnet.Model;
import org.hybridnet.NDArray;
import org.hybridnet.Predictor;

public final class App {
  private App() {}

  public static void main(String[] args) {
    try (Model model = Model.load(args[0], 0);
        Predictor predictor = model.newPredictor();
        NDArray x = NDArray.load(Path.of(args[1]));
        NDArray y = predictor.forward(x)) {
      float[] v = y.toFloatArray();
      System.out.println("Java consumer (Maven): hybridnet " + Hybridnet.version() + ", output "
          + Arrays.toString(y.shape()) + ": " + v[0] + " " + v[1]);
    }
  }
}
