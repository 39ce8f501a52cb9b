package org.hybridnet.scalaapi

import java.nio.file.Files

import scala.util.Using

import org.hybridnet.HybridnetException

/** The Scala profiler facade: a hybridized forward and eager ops in the trace and the table. */
class ProfilerTest extends munit.FunSuite {
  private def count(table: String, name: String): Long =
    ("\n" + java.util.regex.Pattern.quote(name) + " +([0-9]+) ").r
      .findFirstMatchIn(table)
      .map(_.group(1).toLong)
      .getOrElse(-1L)

  test("a hybridized forward and a scoped eager op are events and rows") {
    val dir = Files.createTempDirectory("hn_scala_profiler")
    val trace = dir.resolve("trace.json")
    Using.resources(
      HybridSequential(Dense(8, "relu", inUnits = 4), Dense(2, inUnits = 8)),
      NDArray(Array.tabulate(8)(i => i.toFloat - 3f), Shape(2, 4))
    ) { (net, x) =>
      net.initialize("normal", Some(1L))
      net.hybridize()
      net(x).close()
      profiler.setConfig("profile_all" -> "True", "aggregate_stats" -> "True",
        "filename" -> trace.toString)
      profiler.setState("run")
      assertEquals(profiler.state, "run")
      net(x).close()
      profiler.scope("eager") { Op("relu")(x).foreach(_.close()) }
      profiler.setState("stop")
      profiler.dump()
      val table = profiler.dumps(reset = true)
      assertEquals(count(table, "_hn_fully_connected_act"), 1L, table)
      assertEquals(count(table, "FullyConnected"), 1L, table)
      assertEquals(count(table, "eager:relu"), 1L, table)
      val json = new String(Files.readAllBytes(trace), "UTF-8")
      assertEquals("\"ph\":\"X\"".r.findAllMatchIn(json).size, 3, json)
      assert(json.contains("\"fused\":\"FullyConnected+relu\""), json)
      profiler.setConfig("profile_all" -> "False", "filename" -> dir.resolve("drain.json").toString)
    }
  }

  test("bad options throw naming them") {
    val e = intercept[HybridnetException.InvalidArgument] {
      profiler.setConfig("profile_everything" -> "True")
    }
    assert(e.getMessage.contains("profile_everything"), e.getMessage)
    intercept[HybridnetException.InvalidArgument](profiler.dumps(format = "xml"))
  }
}
