package org.hybridnet;

import java.util.Map;
import org.hybridnet.internal.HybridnetNative;

/**
 * The profiler, as MXNet's {@code mx.profiler}: every op call of a hybridized block (fused
 * kernels under their own names) and every eager op call becomes one event of a Chrome trace
 * (chrome://tracing, Perfetto), and the aggregate table counts and times them per op type.
 *
 * <pre>{@code
 * Profiler.setConfig(Map.of("profile_all", "True", "aggregate_stats", "True",
 *                           "filename", "trace.json"));
 * Profiler.setState("run");
 * block.forward(x);
 * Profiler.setState("stop");
 * Profiler.dump(true);                  // trace.json
 * System.out.println(Profiler.dumps()); // the table
 * }</pre>
 *
 * The profiler is one per process; scopes belong to the thread that opened them.
 */
public final class Profiler {
  static {
    org.hybridnet.internal.NativeLoader.load();
  }

  private Profiler() {}

  /**
   * Sets options by MXNet's {@code set_config} keywords (profile_all, profile_symbolic,
   * profile_imperative, profile_memory, profile_api, aggregate_stats, continuous_dump, filename,
   * dump_period), values as strings ("True", "False").
   *
   * @param options the options to set; others keep their values
   * @throws HybridnetException.InvalidArgument for an unknown key or a bad value
   */
  public static void setConfig(Map<String, String> options) {
    String[][] kv = Op.attributes(options);
    HybridnetNative.hn_profiler_set_config(kv[0], kv[1], kv[0].length);
  }

  /**
   * Starts ("run") or stops ("stop") recording.
   *
   * @param state "run" or "stop"
   * @throws HybridnetException.InvalidArgument for another string
   */
  public static void setState(String state) {
    HybridnetNative.hn_profiler_set_state(state);
  }

  /**
   * The state.
   *
   * @return "run" or "stop"
   */
  public static String state() {
    String[] out = new String[1];
    HybridnetNative.hn_profiler_state(out);
    return out[0];
  }

  /** Stops recording until {@link #resume}, the state staying "run". */
  public static void pause() {
    HybridnetNative.hn_profiler_pause();
  }

  /** Records again after {@link #pause}. */
  public static void resume() {
    HybridnetNative.hn_profiler_resume();
  }

  /**
   * Writes the events recorded since the last dump to the trace file.
   *
   * @param finished whether to complete the file (later dumps start it anew)
   * @throws HybridnetException.IO when the file cannot be written
   */
  public static void dump(boolean finished) {
    HybridnetNative.hn_profiler_dump(finished ? 1 : 0);
  }

  /**
   * The aggregate table (count, total, min, max and average ms per op type), largest total
   * first.
   *
   * @return the table, as MXNet prints it
   */
  public static String dumps() {
    return dumps(false, "table", "total", false);
  }

  /**
   * The aggregate statistics.
   *
   * @param reset whether to clear them afterwards
   * @param format "table" or "json"
   * @param sortBy "total", "avg", "min", "max" or "count"
   * @param ascending whether the smallest comes first
   * @return the statistics in MXNet's layout
   * @throws HybridnetException.InvalidArgument for a bad format or sort key
   */
  public static String dumps(boolean reset, String format, String sortBy, boolean ascending) {
    String[] out = new String[1];
    HybridnetNative.hn_profiler_dumps(reset ? 1 : 0, format, sortBy, ascending ? 1 : 0, out);
    return out[0];
  }

  /**
   * Prefixes the names of the ops this thread records with {@code name} until the scope is
   * closed (MXNet 2's {@code profiler.scope}).
   *
   * @param name the prefix (":" is appended when missing)
   * @return the scope, to close on the same thread
   */
  public static Scope scope(String name) {
    HybridnetNative.hn_profiler_scope_push(name);
    return new Scope();
  }

  /** A profiler scope; {@link #close} ends it. */
  public static final class Scope implements AutoCloseable {
    private boolean closed;

    private Scope() {}

    /** Ends the scope (once; later calls do nothing). */
    @Override
    public void close() {
      if (closed) return;
      closed = true;
      HybridnetNative.hn_profiler_scope_pop();
    }
  }
}
