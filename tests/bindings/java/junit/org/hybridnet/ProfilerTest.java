package org.hybridnet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The profiler switches: a hybridized forward and eager ops in the trace and the table. */
@SuppressWarnings("try") // scopes are opened for their close(), not referenced
class ProfilerTest {
  @TempDir Path dir;

  /** The count of row {@code name} of the table's "operator" category; -1 when absent. */
  private static long count(String table, String name) {
    Matcher m = Pattern.compile("\n" + Pattern.quote(name) + " +([0-9]+) ").matcher(table);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }

  private static int occurrences(String text, String needle) {
    int n = 0;
    for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) ++n;
    return n;
  }

  @AfterEach
  void stopAndClear() {
    Profiler.setState("stop");
    Profiler.resume();
    Profiler.setConfig(
        Map.of("profile_all", "False", "filename", dir.resolve("drain.json").toString()));
    Profiler.dump(true);
    Profiler.dumps(true, "table", "total", false);
  }

  @Test
  void hybridizedAndEagerCallsAreEventsAndRows() throws Exception {
    Path trace = dir.resolve("trace.json");
    try (HybridSequential net =
            new HybridSequential("net_").add(new Dense(8, "relu"), new Dense(2));
        NDArray x = NDArray.of(TestSupport.randomValues(3, 2 * 4), 2, 4)) {
      net.initialize("normal", 1);
      net.hybridize();
      net.forward(x).close();
      Profiler.setConfig(
          Map.of(
              "profile_all", "True", "aggregate_stats", "True", "filename", trace.toString()));
      Profiler.setState("run");
      assertEquals("run", Profiler.state());
      net.forward(x).close();
      try (Profiler.Scope s = Profiler.scope("eager")) {
        Op.invoke1("relu", null, x).close();
      }
      Profiler.pause();
      Op.invoke1("relu", null, x).close();
      Profiler.resume();
      Profiler.setState("stop");
      Profiler.dump(true);
      String table = Profiler.dumps();
      assertTrue(table.contains("Profile Statistics:"), table);
      assertEquals(1, count(table, "_hn_fully_connected_act"), table);
      assertEquals(1, count(table, "FullyConnected"), table);
      assertEquals(1, count(table, "eager:relu"), table);
      assertEquals(-1, count(table, "relu"), table);
      String json = Files.readString(trace);
      assertTrue(json.startsWith("{\n\"traceEvents\": [\n"), json);
      assertEquals(3, occurrences(json, "\"ph\":\"X\""), json);
      assertTrue(json.contains("\"fused\":\"FullyConnected+relu\""), json);
    }
  }

  @Test
  void badOptionsAndUnwritableFilesThrow() {
    HybridnetException.InvalidArgument e =
        assertThrows(
            HybridnetException.InvalidArgument.class,
            () -> Profiler.setConfig(Map.of("profile_everything", "True")));
    assertTrue(e.getMessage().contains("profile_everything"), e.getMessage());
    assertThrows(HybridnetException.InvalidArgument.class, () -> Profiler.setState("go"));
    assertThrows(
        HybridnetException.InvalidArgument.class,
        () -> Profiler.dumps(false, "xml", "total", false));
    Profiler.setConfig(Map.of("filename", "/nonexistent-hybridnet-dir/trace.json"));
    HybridnetException.IO io =
        assertThrows(HybridnetException.IO.class, () -> Profiler.dump(true));
    assertTrue(io.getMessage().contains("/nonexistent-hybridnet-dir/trace.json"), io.getMessage());
  }
}
