package org.hybridnet;

import java.nio.file.Path;
import java.util.List;
import org.hybridnet.internal.HybridnetNative;

/**
 * An export (ours or real MXNet's) imported as a block, as MXNet's {@code SymbolBlock.imports}:
 * it runs eagerly or hybridized and can be exported again.
 */
public final class SymbolBlock extends HybridBlock {
  private SymbolBlock(long handle) {
    super(handle);
  }

  /**
   * Imports PREFIX-symbol.json with PREFIX-EEEE.params and the data input "data".
   *
   * @param symbolFile the symbol JSON file
   * @param paramFile the .params file
   * @return the block (close it)
   */
  public static SymbolBlock imports(Path symbolFile, Path paramFile) {
    return imports(symbolFile, List.of("data"), paramFile);
  }

  /**
   * Imports a symbol file, the names of its data inputs and a params file (null for none).
   *
   * @param symbolFile the symbol JSON file
   * @param inputNames the graph's data inputs, in call order
   * @param paramFile the .params file, or null to load parameters later
   * @return the block (close it)
   */
  public static SymbolBlock imports(Path symbolFile, List<String> inputNames, Path paramFile) {
    String[] names = inputNames.toArray(new String[0]);
    String params = paramFile == null ? null : paramFile.toString();
    return new SymbolBlock(
        created(
            out -> HybridnetNative.hn_block_import(symbolFile.toString(), names, params, out)));
  }
}
