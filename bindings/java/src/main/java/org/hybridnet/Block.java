package org.hybridnet;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import org.hybridnet.internal.HybridnetNative;
import org.hybridnet.internal.HybridnetNativeConstants;

/**
 * A Gluon block: a layer or a container of blocks. Build a model, {@link #initialize()} it, call
 * {@link #forward} (eagerly, op by op), {@link HybridBlock#hybridize()} it (the next forward
 * traces one graph and caches an executor; outputs stay identical), {@link
 * HybridBlock#export(String)} it.
 *
 * <p>Threads: the native side requires a block tree to be used by one thread at a time, so every
 * block call takes one process-wide lock. Blocks are for building, training-free experiments and
 * exporting; serve models concurrently with {@link Model} and one {@link Predictor} per thread.
 *
 * <p>Ownership: a container closes the blocks added to it when it is closed.
 */
public abstract class Block extends NativeResource {
  static final Object TREE_LOCK = new Object();
  private static final int MAX_OUTPUTS = 16;

  private final List<Block> children = new ArrayList<>();

  Block(long handle) {
    super(handle, HybridnetNative::hn_block_free);
  }

  /** Creates a native block of {@code kind} with string attributes. */
  static long create(String kind, Map<String, String> attrs) {
    String[][] kv = Op.attributes(attrs);
    return created(out -> HybridnetNative.hn_block_create(kind, kv[0], kv[1], kv[0].length, out));
  }

  /** An attribute map without null values, in insertion order. */
  static Map<String, String> attrs(Object... keyValues) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      if (keyValues[i + 1] != null) m.put((String) keyValues[i], keyValues[i + 1].toString());
    }
    return m;
  }

  /** {@link #call} under the tree lock: a block tree is used by one thread at a time. */
  final <R> R callLocked(LongFunction<R> body) {
    synchronized (TREE_LOCK) {
      return call(body);
    }
  }

  /** {@link #withHandle} under the tree lock. */
  final void withHandleLocked(LongConsumer body) {
    synchronized (TREE_LOCK) {
      withHandle(body);
    }
  }

  void addChild(Block child) {
    if (child == null) throw new NullPointerException("child");
    if (child == this) throw new IllegalArgumentException("hybridnet: a block cannot contain itself");
    withHandleLocked(
        h -> {
          child.withHandle(c -> HybridnetNative.hn_block_add(h, c));
          children.add(child);
        });
  }

  /**
   * Initializes every parameter with MXNet's default initializer (uniform in [-0.07, 0.07]),
   * seeded from {@link Hybridnet#seed}'s sequence (reproducible when the program seeds first).
   */
  public void initialize() {
    initialize("uniform", Hybridnet.nextSeed(), false);
  }

  /**
   * Initializes with {@code initializer} ("uniform", "normal", "xavier", "zeros", "ones"), seeded
   * from {@link Hybridnet#seed}'s sequence.
   *
   * @param initializer the initializer's name
   */
  public void initialize(String initializer) {
    initialize(initializer, Hybridnet.nextSeed(), false);
  }

  /**
   * Initializes with {@code initializer}, drawing from {@code seed}.
   *
   * @param initializer the initializer's name
   * @param seed the seed of the values drawn
   */
  public void initialize(String initializer, long seed) {
    initialize(initializer, seed, false);
  }

  /**
   * Initializes every parameter of the tree; parameters whose shapes are not known yet are
   * drawn at the first forward. {@code forceReinit} re-draws initialized parameters.
   *
   * @param initializer the initializer's name ("uniform", "normal", "xavier", "zeros", "ones")
   * @param seed the seed of the values drawn
   * @param forceReinit whether parameters initialized before are drawn again
   */
  public void initialize(String initializer, long seed, boolean forceReinit) {
    withHandleLocked(
        h -> HybridnetNative.hn_block_initialize(h, initializer, seed, forceReinit ? 1 : 0));
  }

  /**
   * Runs the block and returns its first output (further outputs are freed).
   *
   * @param inputs the block's inputs, in order
   * @return the first output (close it)
   */
  public NDArray forward(NDArray... inputs) {
    NDArray[] out = forwardAll(inputs);
    for (int i = 1; i < out.length; ++i) out[i].close();
    return out[0];
  }

  /**
   * Runs the block (eagerly, or through its cached graph when hybridized); close each output.
   *
   * @param inputs the block's inputs, in order
   * @return every output, in order
   */
  public NDArray[] forwardAll(NDArray... inputs) {
    long[] outputs = new long[MAX_OUTPUTS];
    withHandleLocked(
        h -> callAll(inputs, handles -> HybridnetNative.hn_block_forward(h, handles, outputs)));
    return NDArray.wrapOutputs(outputs);
  }

  /**
   * MXNet 1.9.1's {@code Block.summary} text, byte for byte: runs the block once on {@code
   * inputs} and lists every block called but the sequential containers ("Dense-1", its output
   * shape, the size of its own parameters), then the parameter totals. The block must be
   * initialized and not hybridized.
   *
   * @param inputs the block's inputs, in order
   * @return the table, lines ending in newlines
   */
  public String summary(NDArray... inputs) {
    String[] out = new String[1];
    withHandleLocked(
        h -> callAll(inputs, handles -> HybridnetNative.hn_block_summary(h, handles, out)));
    return out[0];
  }

  /**
   * The block's name, e.g. "dense0" (assigned at first use).
   *
   * @return the name: the block's prefix without its trailing underscore
   */
  public String name() {
    String[] out = new String[1];
    withHandleLocked(h -> HybridnetNative.hn_block_name(h, out));
    return out[0];
  }

  /**
   * Writes the parameters with structural names ("0.weight"), as MXNet's save_parameters.
   *
   * @param path the file to write
   */
  public void saveParameters(Path path) {
    withHandleLocked(h -> HybridnetNative.hn_block_save_parameters(h, path.toString()));
  }

  /**
   * Loads a save_parameters file or an export's .params (every parameter must match).
   *
   * @param path the file to read
   */
  public void loadParameters(Path path) {
    loadParameters(path, false, false);
  }

  /**
   * Loads parameters, optionally allowing missing or extra ones.
   *
   * @param path the file to read
   * @param allowMissing whether parameters absent from the file are left as they are (else an error
   *     names them)
   * @param ignoreExtra whether parameters of the file that the block lacks are skipped (else an
   *     error names them)
   */
  public void loadParameters(Path path, boolean allowMissing, boolean ignoreExtra) {
    withHandleLocked(
        h ->
            HybridnetNative.hn_block_load_parameters(
                h, path.toString(), allowMissing ? 1 : 0, ignoreExtra ? 1 : 0));
  }

  /**
   * The initialized parameters by full name ("dense0_weight"), as copies.
   *
   * @return full name to a copy of the values, in registration order
   */
  public Map<String, float[]> parameters() {
    return callLocked(
        h -> {
          long list = created(out -> HybridnetNative.hn_block_collect_params(h, out));
          try {
            return copies(list);
          } finally {
            HybridnetNative.hn_tensor_list_free(list);
          }
        });
  }

  /**
   * The full names of every parameter of the tree, in registration order (MXNet's {@code
   * collect_params()} order), initialized or not.
   *
   * @return the names
   */
  public List<String> parameterNames() {
    return callLocked(
        h -> {
          long[] count = new long[1];
          HybridnetNative.hn_block_param_count(h, count);
          List<String> names = new ArrayList<>();
          String[] name = new String[1];
          for (long i = 0; i < count[0]; ++i) {
            HybridnetNative.hn_block_param_info(h, i, name, null, null, null);
            names.add(name[0]);
          }
          return names;
        });
  }

  /**
   * The parameter of the tree called {@code name} (its full name).
   *
   * @param name the full name, one of {@link #parameterNames()}
   * @return the parameter
   * @throws HybridnetException.NotFound when the tree has no such parameter
   */
  public Parameter parameter(String name) {
    if (name == null) throw new NullPointerException("name");
    List<String> names = parameterNames();
    if (!names.contains(name)) {
      throw HybridnetException.create(
          HybridnetNativeConstants.HN_ERR_NOT_FOUND,
          "no parameter \"" + name + "\" in this block; it has " + names);
    }
    return new Parameter(this, name);
  }

  /**
   * Every parameter of the tree, in {@link #parameterNames()} order.
   *
   * @return the parameters
   */
  public List<Parameter> collectParameters() {
    List<Parameter> params = new ArrayList<>();
    for (String name : parameterNames()) params.add(new Parameter(this, name));
    return params;
  }

  /** Zeroes the gradient buffers of every parameter of the tree (MXNet's {@code zero_grad}). */
  public void zeroGrad() {
    withHandleLocked(h -> HybridnetNative.hn_block_param_zero_grad(h, null));
  }

  /**
   * Sets grad_req of every parameter of the tree (MXNet's {@code
   * collect_params().setattr('grad_req', ...)}); parameters that are not differentiable keep
   * "null".
   *
   * @param gradReq "write", "add" or "null"
   */
  public void setGradReq(String gradReq) {
    if (gradReq == null) throw new NullPointerException("gradReq");
    withHandleLocked(h -> HybridnetNative.hn_block_param_set_attr(h, null, "grad_req", gradReq));
  }

  /** The arrays of a native tensor list as float[] copies by name. */
  private static Map<String, float[]> copies(long list) {
    long[] size = new long[1];
    HybridnetNative.hn_tensor_list_size(list, size);
    Map<String, float[]> params = new LinkedHashMap<>();
    String[] name = new String[1];
    for (long i = 0; i < size[0]; ++i) {
      long index = i;
      HybridnetNative.hn_tensor_list_name(list, index, name);
      try (NDArray a =
          new NDArray(created(out -> HybridnetNative.hn_tensor_list_get(list, index, out)))) {
        params.put(name[0], a.toFloatArray());
      }
    }
    return params;
  }

  /** MXNet's text form of the tree ("HybridSequential(\n  (0): Dense(512 -> 256, ...)..."). */
  @Override
  public String toString() {
    if (isClosed()) return getClass().getSimpleName() + "(closed)";
    String[] out = new String[1];
    withHandleLocked(h -> HybridnetNative.hn_block_to_string(h, out));
    return out[0];
  }

  /** Closes this block and the blocks added to it. Idempotent. */
  @Override
  public void close() {
    List<Block> owned;
    synchronized (TREE_LOCK) {
      owned = new ArrayList<>(children);
      children.clear();
    }
    super.close();
    for (Block child : owned) child.close();
  }
}
