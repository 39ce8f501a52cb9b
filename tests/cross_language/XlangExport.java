// The Java side of the cross-language export check (run as a single source file):
//   java -cp hybridnet.jar XlangExport.java PREFIX SEED IN.npy
// The same steps as xlang_cpp export and xlang_export.R: the seed MLP, seeded initialize,
// hybridize, one forward on IN, export.
import java.nio.file.Path;
import org.hybridnet.Dense;
import org.hybridnet.HybridSequential;
import org.hybridnet.Hybridnet;
import org.hybridnet.NDArray;

public final class XlangExport {
  private XlangExport() {}

  public static void main(String[] args) {
    Hybridnet.setNumThreads(1);
    try (HybridSequential net =
            new HybridSequential().add(new Dense(256, "relu"), new Dense(128, "relu"), new Dense(2));
        NDArray x = NDArray.load(Path.of(args[2]))) {
      net.initialize("uniform", Long.parseLong(args[1]), false);
      net.hybridize();
      net.forward(x).close();
      net.export(args[0]);
      System.out.println("Java wrote " + args[0] + "-symbol.json and " + args[0] + "-0000.params");
    }
  }
}
