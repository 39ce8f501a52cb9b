package org.hybridnet;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import org.hybridnet.internal.NativeLoader;

/**
 * The base of every object that owns a native handle.
 *
 * <ul>
 *   <li>{@link #close()} frees the handle; a second {@code close()} does nothing.
 *   <li>Any other call after {@code close()} throws {@link IllegalStateException}.
 *   <li>A {@link Cleaner} frees handles of objects that become unreachable without {@code
 *       close()} (a safety net: native memory is invisible to the garbage collector, so close
 *       what you create, preferably with try-with-resources).
 *   <li>{@code close()} racing a call on another thread is safe: every call holds a reference
 *       count on the handle, and the handle is freed when the last call in flight returns.
 * </ul>
 *
 * <p>A subclass passes its kind's free function once ({@code super(handle,
 * HybridnetNative::hn_tensor_free)}) and makes every native call through {@link #call} or
 * {@link #withHandle}, which hold the handle for the call's duration.
 */
public abstract class NativeResource implements AutoCloseable {
  static {
    NativeLoader.load();
  }

  private static final Cleaner CLEANER =
      Cleaner.create(
          r -> {
            Thread t = new Thread(r, "hybridnet-cleaner");
            t.setDaemon(true);
            return t;
          });
  private static final AtomicLong LIVE = new AtomicLong();
  /** Sign bit: closed; the other bits count the calls in flight. */
  private static final int CLOSED = Integer.MIN_VALUE;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(NativeResource.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long handle;
  private final Cleaner.Cleanable cleanable;

  @SuppressWarnings("unused") // accessed through STATE
  private volatile int state;

  /** Owns {@code handle}, which {@code free} (the kind's hn_*_free) releases exactly once. */
  NativeResource(long handle, LongConsumer free) {
    if (handle == 0) throw new IllegalStateException("hybridnet: the native library returned NULL");
    this.handle = handle;
    LIVE.incrementAndGet();
    this.cleanable = CLEANER.register(this, new Releaser(free, handle));
  }

  /**
   * Runs {@code body} with the handle, kept alive (not freed by a racing close()) until it
   * returns.
   *
   * @throws IllegalStateException after {@link #close()}
   */
  final <R> R call(LongFunction<R> body) {
    long h = acquire();
    try {
      return body.apply(h);
    } finally {
      release();
    }
  }

  /** {@link #call} for a body without a result. */
  final void withHandle(LongConsumer body) {
    call(
        h -> {
          body.accept(h);
          return null;
        });
  }

  /** {@link #call} with the handles of every element of {@code resources}, in order. */
  static <R> R callAll(NativeResource[] resources, Function<long[], R> body) {
    long[] handles = acquireAll(resources);
    try {
      return body.apply(handles);
    } finally {
      releaseAll(resources, resources.length);
    }
  }

  /**
   * A new handle from a native constructor, which stores it in {@code out[0]} (a failed call
   * throws before anything is stored).
   */
  static long created(Consumer<long[]> constructor) {
    long[] out = new long[1];
    constructor.accept(out);
    return out[0];
  }

  /**
   * Starts a call: returns the handle and keeps it alive until {@link #release()}.
   *
   * @throws IllegalStateException after {@link #close()}
   */
  private long acquire() {
    for (; ; ) {
      int s = state;
      if (s < 0) throw closedError();
      if (STATE.compareAndSet(this, s, s + 1)) return handle;
    }
  }

  /** Ends a call started by {@link #acquire()}; frees the handle if a close came meanwhile. */
  private void release() {
    int s = (int) STATE.getAndAdd(this, -1) - 1;
    if (s == CLOSED) cleanable.clean();
    Reference.reachabilityFence(this);
  }

  /** Frees the native object (at once, or when the calls in flight return). Idempotent. */
  @Override
  public void close() {
    for (; ; ) {
      int s = state;
      if (s < 0) return;
      if (STATE.compareAndSet(this, s, s | CLOSED)) {
        if (s == 0) cleanable.clean();
        return;
      }
    }
  }

  /**
   * True once {@link #close()} was called.
   *
   * @return whether {@link #close()} was called
   */
  public final boolean isClosed() {
    return state < 0;
  }

  /** Acquires every element (see {@link #acquire()}); on failure releases those acquired. */
  private static long[] acquireAll(NativeResource[] resources) {
    long[] handles = new long[resources.length];
    int i = 0;
    try {
      for (; i < resources.length; ++i) {
        if (resources[i] == null) throw new NullPointerException("element " + i + " is null");
        handles[i] = resources[i].acquire();
      }
    } catch (RuntimeException e) {
      releaseAll(resources, i);
      throw e;
    }
    return handles;
  }

  /** Releases the first {@code count} elements. */
  private static void releaseAll(NativeResource[] resources, int count) {
    for (int i = 0; i < count; ++i) resources[i].release();
  }

  IllegalStateException closedError() {
    return new IllegalStateException("hybridnet: this " + getClass().getSimpleName() + " is closed");
  }

  /** Native objects created by this binding and not freed yet (by close() or the Cleaner). */
  static long liveObjects() {
    return LIVE.get();
  }

  /** Frees one handle; run once, by close() or by the Cleaner. Holds no reference to the owner. */
  private static final class Releaser implements Runnable {
    private final LongConsumer free;
    private final long handle;

    Releaser(LongConsumer free, long handle) {
      this.free = free;
      this.handle = handle;
    }

    @Override
    public void run() {
      free.accept(handle);
      LIVE.decrementAndGet();
    }
  }
}
