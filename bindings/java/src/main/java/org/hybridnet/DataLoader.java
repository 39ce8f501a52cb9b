package org.hybridnet;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.hybridnet.internal.HybridnetNative;

/**
 * MXNet's {@code gluon.data.DataLoader} over in-memory arrays (an ArrayDataset): batches of rows
 * of each array, in order or shuffled from a seed, so a seed gives the same batches in every
 * language.
 *
 * <pre>{@code
 * try (DataLoader loader = new DataLoader(new NDArray[] {images, labels}, 32, true, "keep", 42)) {
 *   for (int epoch = 0; epoch < 10; ++epoch) {
 *     for (NDArray[] batch : loader) {      // {images rows, labels rows}
 *       try (NDArray x = batch[0]; NDArray y = batch[1]) { ... }
 *     }
 *   }
 * }
 * }</pre>
 *
 * Each {@link #iterator()} starts a new epoch (a new order when shuffling); the batches are new
 * arrays, closed by the caller. A loader is used by one thread at a time.
 */
public final class DataLoader extends NativeResource implements Iterable<NDArray[]> {
  private final int numArrays;

  /**
   * A loader in order, keeping a short last batch.
   *
   * @param arrays the arrays (one row per sample, the same number of rows each; shared, not
   *     copied)
   * @param batchSize the rows per batch, at least 1
   */
  public DataLoader(NDArray[] arrays, long batchSize) {
    this(arrays, batchSize, false, "keep", 0);
  }

  /**
   * A loader.
   *
   * @param arrays the arrays (one row per sample, the same number of rows each; shared, not
   *     copied)
   * @param batchSize the rows per batch, at least 1
   * @param shuffle whether each epoch draws a new order from a generator seeded once with {@code
   *     seed}
   * @param lastBatch MXNet's "keep", "discard" or "rollover"
   * @param seed the seed of the shuffling
   * @throws HybridnetException.InvalidArgument for a bad batch size or lastBatch
   * @throws HybridnetException.Shape for arrays of different lengths or a scalar
   */
  public DataLoader(
      NDArray[] arrays, long batchSize, boolean shuffle, String lastBatch, long seed) {
    super(
        create(arrays, batchSize, shuffle, lastBatch, seed), HybridnetNative::hn_data_loader_free);
    this.numArrays = arrays.length;
  }

  private static long create(
      NDArray[] arrays, long batchSize, boolean shuffle, String lastBatch, long seed) {
    if (arrays == null) throw new NullPointerException("arrays");
    return callAll(
        arrays,
        handles ->
            created(
                out ->
                    HybridnetNative.hn_data_loader_create(
                        handles, batchSize, shuffle ? 1 : 0, lastBatch, seed, out)));
  }

  /**
   * The number of batches an epoch started now yields (MXNet's {@code len(loader)}).
   *
   * @return the number of batches
   */
  public long numBatches() {
    long[] n = new long[1];
    withHandle(h -> HybridnetNative.hn_data_loader_num_batches(h, n));
    return n[0];
  }

  /**
   * Starts a new epoch (an epoch left unfinished is dropped) and iterates over its batches.
   *
   * @return the batches: one array per loader array, in order (close each)
   */
  @Override
  public Iterator<NDArray[]> iterator() {
    withHandle(HybridnetNative::hn_data_loader_reset);
    return new Iterator<>() {
      private NDArray[] next = fetch();

      @Override
      public boolean hasNext() {
        return next != null;
      }

      @Override
      public NDArray[] next() {
        if (next == null) throw new NoSuchElementException("hybridnet: the epoch has ended");
        NDArray[] batch = next;
        next = fetch();
        return batch;
      }
    };
  }

  /** The epoch's next batch, or null at its end. */
  private NDArray[] fetch() {
    long[] fields = new long[numArrays];
    withHandle(h -> HybridnetNative.hn_data_loader_next(h, fields));
    NDArray[] batch = NDArray.wrapOutputs(fields);
    return batch.length == 0 ? null : batch;
  }
}
