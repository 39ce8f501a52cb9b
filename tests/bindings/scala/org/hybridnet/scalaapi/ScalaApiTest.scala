package org.hybridnet.scalaapi

import java.nio.file.{Files, Path}

import scala.sys.process._
import scala.util.{Failure, Try, Using}

/** The Scala API: shapes and conversions, the DSL, resources released by `Using`, errors as
  * exceptions, and the same numbers as C and C++ on one export.
  */
class ScalaApiTest extends munit.FunSuite {
  private lazy val binDir: Path = Path.of(sys.props.getOrElse("hybridnet.bin.dir", fail("-Dhybridnet.bin.dir")))

  private def run(cmd: String*): String = {
    val out = new StringBuilder
    val code = Process(cmd).!(ProcessLogger(line => out.append(line).append('\n')))
    assertEquals(code, 0, s"${cmd.mkString(" ")} failed:\n$out")
    out.toString
  }

  private val tmp = FunFixture[Path](
    setup = _ => Files.createTempDirectory("hybridnet-scala-"),
    teardown = dir => { s"rm -rf $dir".!; () })

  /** The C++ seed walkthrough's export, made once and removed after the suite. */
  private lazy val seedDir: Path = {
    val dir = Files.createTempDirectory("hybridnet-scala-seed-")
    run(binDir.resolve("seed_walkthrough").toString, "--out", dir.toString)
    dir
  }
  private var seedMade = false
  private def seedPrefix: Path = { seedMade = true; seedDir.resolve("seed_mlp") }

  override def afterAll(): Unit = if (seedMade) { s"rm -rf $seedDir".!; () }

  private def randomValues(seed: Long, n: Int): Array[Float] = {
    val r = new scala.util.Random(seed)
    Array.fill(n)(r.nextGaussian().toFloat)
  }

  private def loadValues(path: Path): IndexedSeq[Float] = Using.resource(NDArray.load(path))(_.toSeq)

  test("Shape is an immutable case class") {
    val s = Shape(2, 3, 4)
    assertEquals(s, Shape(Vector(2L, 3L, 4L)))
    assertEquals(s.ndim, 3)
    assertEquals(s.size, 24L)
    assertEquals(s(1), 3L)
    assertEquals(s.toString, "(2, 3, 4)")
    assertEquals(Shape(5).toString, "(5,)")
    assertEquals(Shape.scalar.size, 1L)
    assertEquals(s.copy(dims = s.dims.updated(0, 1L)), Shape(1, 3, 4))
    intercept[IllegalArgumentException](Shape(-1))
  }

  test("NDArray conversions: Array[Float] and Seq in and out, arithmetic") {
    Using.resources(NDArray(Array(1f, 2f, 3f, 4f, 5f, 6f), Shape(2, 3)), NDArray(Seq(1f, 1f, 1f), Shape(1, 3))) {
      (a, b) =>
        assertEquals(a.shape, Shape(2, 3))
        assertEquals(a.toSeq, IndexedSeq(1f, 2f, 3f, 4f, 5f, 6f))
        assert(a.toArray.sameElements(Array(1f, 2f, 3f, 4f, 5f, 6f)))
        Using.resource(a + b) { c => assertEquals(c.toSeq, IndexedSeq(2f, 3f, 4f, 5f, 6f, 7f)) }
        Using.resource(a * a) { c => assertEquals(c.toSeq.take(3), IndexedSeq(1f, 4f, 9f)) }
        Using.resource(a.reshape(Shape(3, 2))) { r => assertEquals(r.shape, Shape(3, 2)) }
        Using.resource(NDArray(7f, 8f)) { v => assertEquals(v.shape, Shape(2)) }
    }
  }

  test("the DSL builds the seed MLP; eager and hybridized agree") {
    val x = randomValues(1, 512)
    Using.resources(HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2)), NDArray(x, Shape(1, 512))) {
      (net, input) =>
        assertEquals(net.children.size, 3)
        net.initialize(seed = Some(3L))
        val eager = Using.resource(net(input))(_.toSeq)
        assertEquals(eager.size, 2)
        assert(net.toString.contains("Dense(512 -> 256"), net.toString)
        net.hybridize()
        assertEquals(Using.resource(net(input))(_.toSeq), eager)
        Using.resource(net.trace()) { program =>
          assertEquals(program.arguments.head, "data")
          assertEquals(program.inferShape("data" -> Shape(4, 512)).outputs.values.head, Shape(4, 2))
        }
    }
  }

  tmp.test("the C++ seed export gives the same numbers as C and C++") { dir =>
    val x = randomValues(2, 4 * 512)
    val in = dir.resolve("x.npy")
    Using.resource(NDArray(x, Shape(4, 512)))(_.save(in))
    run(binDir.resolve("hybridnet").toString, "run", seedPrefix.toString, "0", "--input", s"data=$in",
      "--output", dir.resolve("y_c.npy").toString) // the CLI: a C API program
    run(binDir.resolve("hn_bindings_run").toString, "run", seedPrefix.toString, "0", in.toString,
      dir.resolve("y_cpp.npy").toString) // the C++ core
    val scala = Using.Manager { use =>
      val model = use(Model.load(seedPrefix.toString, 0))
      val predictor = use(model.predictor())
      assertEquals(model.inputNames, Seq("data"))
      predictor(x.toSeq, Shape(4, 512))
    }.get
    assertEquals(scala, loadValues(dir.resolve("y_c.npy")))
    assertEquals(scala, loadValues(dir.resolve("y_cpp.npy")))
  }

  tmp.test("a model built in Scala exports and loads in C++ with the same numbers") { dir =>
    val x = randomValues(3, 2 * 512)
    val prefix = dir.resolve("scala_mlp").toString
    val scalaOut = Using.resources(HybridSequential(Dense(256, "relu"), Dense(128, "relu"), Dense(2)),
      NDArray(x, Shape(2, 512))) { (net, input) =>
      net.initialize("xavier", Some(11L)).hybridize()
      val y = Using.resource(net(input))(_.toSeq)
      net.export(prefix)
      input.save(dir.resolve("x.npy"))
      y
    }
    run(binDir.resolve("hn_bindings_run").toString, "run", prefix, "0", dir.resolve("x.npy").toString,
      dir.resolve("y_cpp.npy").toString, "--hybridize")
    assertEquals(loadValues(dir.resolve("y_cpp.npy")), scalaOut)
    // And back in Scala, from files and from memory.
    Using.Manager { use =>
      val block = use(SymbolBlock.imports(prefix))
      val input = use(NDArray(x, Shape(2, 512)))
      assertEquals(use(block(input)).toSeq, scalaOut)
      val model = use(Model.fromBytes(Files.readAllBytes(Path.of(s"$prefix-symbol.json")),
        Files.readAllBytes(Path.of(s"$prefix-0000.params"))))
      val predictor = use(model.predictor())
      assertEquals(predictor(x.toSeq, Shape(2, 512)), scalaOut)
    }.get
  }

  test("Using releases every resource, also when the body throws") {
    System.gc()
    val before = Hybridnet.liveObjects
    var kept: Seq[AutoCloseable] = Nil
    val result = Try {
      Using.Manager { use =>
        val model = use(Model.load(seedPrefix.toString, 0))
        val p1 = use(model.predictor())
        val p2 = use(p1.clone())
        val a = use(NDArray.zeros(Shape(1, 512)))
        kept = Seq(model, p1, p2, a)
        assertEquals(p2(a).shape, Shape(1, 2)) // the output NDArray is left to the Cleaner
        throw new RuntimeException("boom")
      }.get
    }
    assert(result.isFailure)
    assertEquals(result.failed.get.getMessage, "boom")
    kept.foreach {
      case m: Model     => assert(m.isClosed)
      case p: Predictor => assert(p.isClosed)
      case a: NDArray   => assert(a.isClosed)
      case other        => fail(s"unexpected $other")
    }
    val deadline = System.currentTimeMillis() + 10000
    while (Hybridnet.liveObjects > before && System.currentTimeMillis() < deadline) {
      System.gc()
      Thread.sleep(20)
    }
    assert(Hybridnet.liveObjects <= before, s"live ${Hybridnet.liveObjects}, before $before")
  }

  tmp.test("errors surface as exceptions") { dir =>
    val missing = intercept[HybridnetException.IO](Model.load(dir.resolve("none").toString, 0))
    assertEquals(missing.status, org.hybridnet.Status.IO)
    assert(missing.getMessage.contains("none-symbol.json"), missing.getMessage)
    Try(Model.load(dir.resolve("none").toString, 0)) match {
      case Failure(e: HybridnetException) => assertEquals(e.status.cName, "HN_ERR_IO")
      case other                          => fail(s"expected a HybridnetException, got $other")
    }
    Using.Manager { use =>
      val predictor = use(use(Model.load(seedPrefix.toString, 0)).predictor())
      val shape = intercept[HybridnetException.Shape](predictor(Array.fill(10)(0f), Shape(1, 10)))
      assert(shape.getMessage.contains("FullyConnected"), shape.getMessage)
      intercept[HybridnetException.NotFound](predictor.setInput("pixels", Array.fill(512)(0f), Shape(1, 512)))
    }.get
    intercept[HybridnetException.InvalidArgument](Dense(4, "bogus"))
    val closed = NDArray(1f)
    closed.close()
    closed.close()
    intercept[IllegalStateException](closed.shape)
  }

  tmp.test("exportOnnx writes the file hybridnet convert writes") { dir =>
    val fromScala = dir.resolve("scala.onnx")
    val fromCli = dir.resolve("cli.onnx")
    Using.resource(Model.load(seedPrefix.toString, 0)) { model =>
      model.exportOnnx(fromScala.toString, Map("data" -> Shape(3, 512)), dynamicBatch = true)
      val e = intercept[org.hybridnet.HybridnetException.InvalidArgument](
        model.exportOnnx(fromScala.toString, Map("data" -> Shape(3, 512)), opset = 12))
      assert(e.getMessage.contains("opset 12"), e.getMessage)
    }
    run(binDir.resolve("hybridnet").toString, "convert",
        s"$seedPrefix-symbol.json,$seedPrefix-0000.params", fromCli.toString, "--input", "data=3,512",
        "--dynamic-batch")
    assert(java.util.Arrays.equals(Files.readAllBytes(fromCli), Files.readAllBytes(fromScala)))
  }

  test("summary prints the table hybridnet summary prints") {
    Using.resource(Model.load(seedPrefix.toString, 0)) { model =>
      val table = model.summary(Map("data" -> Shape(3, 512)))
      val cli = binDir.resolve("hybridnet").toString
      assert(table == run(cli, "summary", seedPrefix.toString, "0", "--input", "data=3,512"))
      assert(table.contains("\nTotal params: "), table)
      assert(model.summary() == run(cli, "summary", seedPrefix.toString, "0"))
      val e = intercept[org.hybridnet.HybridnetException.NotFound](
        model.summary(Map("pixels" -> Shape(3, 512))))
      assert(e.getMessage.contains("'pixels'"), e.getMessage)
    }
  }
}
