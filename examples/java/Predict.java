// Runs an export (hybridnet's or real MXNet's) on a .npy input and writes the first output.
//
//   java -cp hybridnet.jar:hybridnet-examples.jar Predict PREFIX EPOCH INPUT.npy OUTPUT.npy
//
// PREFIX-symbol.json and PREFIX-EEEE.params are read; the input feeds the model's first data
// input (its shape is taken from the file, so any batch size works).
import java.nio.file.Path;
import java.util.Arrays;
import org.hybridnet.HybridnetException;
import org.hybridnet.Model;
import org.hybridnet.NDArray;
import org.hybridnet.Predictor;

public final class Predict {
  private Predict() {}

  public static void main(String[] args) {
    if (args.length != 4) {
      System.err.println("usage: Predict PREFIX EPOCH INPUT.npy OUTPUT.npy");
      System.exit(2);
    }
    int epoch;
    try {
      epoch = Integer.parseInt(args[1]);
    } catch (NumberFormatException e) {
      System.err.println("Predict: EPOCH must be a number, got '" + args[1] + "'");
      System.exit(2);
      return;
    }
    try (Model model = Model.load(args[0], epoch);
        Predictor predictor = model.newPredictor();
        NDArray input = NDArray.load(Path.of(args[2]));
        NDArray output = predictor.forward(input)) {
      output.save(Path.of(args[3]));
      System.out.println(
          "inputs " + model.inputNames() + " <- " + Arrays.toString(input.shape()) + " from " + args[2]);
      System.out.println(
          "wrote " + model.outputNames().get(0) + " " + Arrays.toString(output.shape()) + " to " + args[3]);
    } catch (HybridnetException e) {
      System.err.println("Predict: " + e.getMessage());
      System.exit(1);
    }
  }
}
