// Runs an export (hybridnet's or real MXNet's) on .npy inputs and writes its outputs.
//
//   java -cp hybridnet.jar:hybridnet-examples.jar Predict PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy
//
// PREFIX-symbol.json and PREFIX-EEEE.params are read; the inputs feed the model's data inputs in
// order (BERT: tokens, token types, valid length; shapes are taken from the files, so any batch
// size works). OUTPUT.npy gets the first output, OUTPUT.K.npy output K of a model with several
// (a detector's ids, scores and boxes).
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
    String[] files = args[2].split(",");
    NDArray[] inputs = new NDArray[files.length];
    NDArray[] outputs = new NDArray[0];
    try (Model model = Model.load(args[0], epoch);
        Predictor predictor = model.newPredictor()) {
      for (int i = 0; i < files.length; ++i) inputs[i] = NDArray.load(Path.of(files[i]));
      outputs = predictor.run(inputs);
      System.out.println("inputs " + model.inputNames() + " <- " + args[2]);
      for (int k = 0; k < outputs.length; ++k) {
        String path = outputPath(args[3], k);
        outputs[k].save(Path.of(path));
        System.out.println("wrote " + model.outputNames().get(k) + " "
            + Arrays.toString(outputs[k].shape()) + " to " + path);
      }
    } catch (HybridnetException e) {
      System.err.println("Predict: " + e.getMessage());
      System.exit(1);
    } finally {
      for (NDArray a : inputs) if (a != null) a.close();
      for (NDArray a : outputs) a.close();
    }
  }

  /** OUTPUT.npy for output 0, OUTPUT.K.npy for output K. */
  static String outputPath(String output, int k) {
    return k == 0 ? output : output.replaceFirst("\\.npy$", "") + "." + k + ".npy";
  }
}
