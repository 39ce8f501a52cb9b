package org.hybridnet.scalaapi

import java.nio.file.Files

import scala.util.Using

/** The Scala training facade: autograd blocks, parameters, trainer, losses, metrics, loader. */
class TrainingTest extends munit.FunSuite {
  private val xs = Array(-1.5f, -0.25f, 0.5f, 2f)

  test("autograd.record and backward give the gradient of exp") {
    Using.resource(NDArray(xs, Shape(4))) { x =>
      x.attachGrad()
      assert(!autograd.isRecording)
      val y = autograd.record {
        assert(autograd.isRecording && autograd.isTraining)
        Op("exp")(x).head
      }
      assert(!autograd.isRecording)
      Using.resources(y, x.grad) { (out, dx) =>
        out.backward()
        assertEquals(dx.toSeq, out.toSeq)
      }
    }
  }

  test("scopes nest and restore the flags, also when the body throws") {
    autograd.record(trainMode = false) {
      assert(!autograd.isTraining)
      autograd.trainMode { assert(autograd.isTraining && autograd.isRecording) }
      autograd.pause() { assert(!autograd.isRecording) }
      intercept[IllegalArgumentException] {
        autograd.predictMode { throw new IllegalArgumentException("body") }
      }
      assert(autograd.isRecording && !autograd.isTraining)
    }
    assert(!autograd.isRecording && !autograd.isTraining)
  }

  test("grad with head gradients, and clear errors for misuse") {
    Using.resources(NDArray(xs, Shape(4)), NDArray(Array.fill(4)(3f), Shape(4))) { (x, three) =>
      intercept[IllegalStateException](x.grad)
      x.attachGrad()
      val y = autograd.record { Op("square")(x).head }
      val grads = autograd.grad(Seq(y), Seq(x), Seq(three))
      assertEquals(grads.size, 1)
      val dx = grads.head
      assertEquals(dx.toSeq, xs.toSeq.map(_ * 6))
      dx.close()
      y.close()
      Using.resource(Op("exp")(x).head) { notRecorded =>
        intercept[HybridnetException.InvalidArgument](notRecorded.backward())
      }
    }
  }

  test("a training loop: Trainer, Loss, Metric, DataLoader, hybridized") {
    val data = Array.tabulate(40 * 4)(i => math.sin(i * 0.7).toFloat)
    val labels = Array.tabulate(40)(i => if (data(4 * i) + data(4 * i + 1) > 0) 1f else 0f)
    Using.resources(
      HybridSequential(Dense(16, "relu", inUnits = 4), Dense(2, inUnits = 16)),
      Loss("SoftmaxCrossEntropyLoss"),
      NDArray(data, Shape(40, 4)),
      NDArray(labels, Shape(40))) { (net, lossFn, x, y) =>
      net.initialize("xavier", Some(1L))
      net.hybridize()
      Using.resources(Trainer(net, "adam", "learning_rate" -> "0.05"), Metric("acc"),
          DataLoader(Seq(x, y), 8, shuffle = true, seed = 42)) { (trainer, acc, loader) =>
        assertEquals(loader.numBatches, 5L)
        var first = 0f
        var last = 0f
        for (epoch <- 0 until 30) {
          var total = 0f
          for (batch <- loader) {
            assertEquals(batch.size, 2)
            val (bx, by) = (batch(0), batch(1))
            val loss = autograd.record { Using.resource(net(bx)) { out => lossFn(out, by) } }
            loss.backward()
            trainer.step(bx.shape(0).toInt)
            total += Using.resource(loss.sum())(_.toFloat)
            (loss +: batch).foreach(_.close())
          }
          if (epoch == 0) first = total
          last = total
        }
        assert(last < first / 4, s"the loss fell from $first to $last")
        Using.resource(net(x)) { pred => acc.update(y, pred) }
        assert(acc.value > 0.9, acc.get.toString)
        assertEquals(acc.get.keys.toSeq, Seq("accuracy"))
        val states = Files.createTempFile("hybridnet-scala-", ".states")
        trainer.saveStates(states)
        trainer.loadStates(states)
        Files.delete(states)
      }
    }
  }

  test("parameters, optimizers and schedulers") {
    Using.resource(HybridSequential(Dense(2, inUnits = 3))) { net =>
      net.initialize()
      val w = net.parameter(net.parameterNames.head)
      assertEquals(w.gradReq, "write")
      w.lrMult = 2.0
      assertEquals(w.lrMult, 2.0)
      w.gradReq = "null"
      intercept[HybridnetException.InvalidArgument](w.grad)
      intercept[HybridnetException.NotFound](net.parameter("none"))
      assertEquals(net.collectParameters.map(_.name), net.parameterNames)
      Using.resources(Optimizer("sgd", "learning_rate" -> "0.1", "momentum" -> "0.9"),
          LRScheduler("factor", "step" -> "2", "factor" -> "0.5")) { (sgd, factor) =>
        assertEquals(sgd.hyperParameters("momentum"), "0.9")
        assertEquals(factor(0), 0.01f)
        sgd.setLRScheduler(Some(factor))
        intercept[HybridnetException.InvalidArgument] { sgd.learningRate = 1f }
        sgd.setLRScheduler(None)
        sgd.learningRate = 1f
        assertEquals(sgd.learningRate, 1f)
        val trainer = Trainer(net, sgd)
        trainer.close()
        intercept[IllegalStateException](trainer.step(1))
      }
      intercept[HybridnetException.NotFound](Optimizer("steepest"))
      intercept[HybridnetException.NotFound](Loss("L5Loss"))
      intercept[HybridnetException.NotFound](Layer("Conv5D"))
      intercept[HybridnetException.NotFound](Metric("vibes"))
    }
  }
}
