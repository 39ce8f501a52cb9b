# Training through the C API: tensors, autograd, block parameters, trainers, losses, metrics,
# data loaders, and their errors.

# Dense(1, in_units = 2, no bias) with weight w: the smallest block with a known gradient.
hn_linear <- function(w) {
  net <- hn_sequential(hn_dense(1, in_units = 2, use_bias = FALSE))
  hn_initialize(net)
  hybridnet:::c_hn_block_param_set_data(net@handle, hn_param_names(net)[[1L]],
                                        hn_tensor(matrix(w, 1, 2))@handle)
  net
}

hn_weight <- function(net) as.array(hn_parameters(net)[[1L]])

test_that("tensors keep R's values and layouts", {
  x <- matrix(c(1.5, -2, 3, 4, 5, 6), nrow = 2)
  t <- hn_tensor(x)
  expect_identical(hn_shape(t), c(2, 3))
  expect_identical(as.array(t), x)
  expect_identical(hn_shape(hn_tensor(x, layout = "colmajor")), c(3, 2))
  expect_identical(as.array(hn_tensor(x, layout = "colmajor"), layout = "colmajor"), x)
  expect_identical(as.array(hn_sum(t)), sum(x))
  expect_identical(hn_shape(hn_tensor(1:5)), 5)
  expect_identical(hn_tensor(t), t)
  expect_identical(as.array(hn_detach(t)), x)
  expect_output(show(t), "hybridnet tensor \\(2, 3\\)")
})

test_that("tensors convert arrays of any rank, data frames and NA in one pass", {
  a <- array(seq_len(24) / 4, dim = c(2, 3, 4))
  expect_identical(hn_shape(hn_tensor(a)), c(2, 3, 4))
  expect_identical(as.array(hn_tensor(a)), a)
  expect_identical(hn_shape(hn_tensor(a, layout = "colmajor")), c(4, 3, 2))
  expect_identical(as.array(hn_tensor(a, layout = "colmajor"), layout = "colmajor"), a)
  expect_identical(as.array(hn_tensor(array(1:3, dim = 3))), c(1, 2, 3))
  df <- data.frame(u = c(1, 2), v = c(3, 4))
  expect_identical(as.array(hn_tensor(df)), unname(as.matrix(df)))
  expect_identical(as.array(hn_tensor(c(TRUE, NA, FALSE))), c(1, NA, 0))
  expect_identical(as.array(hn_tensor(c(1L, NA))), c(1, NA))
  expect_error(hn_tensor(factor("a")), "hn_tensor: 'x' must be a numeric vector, matrix or array",
               class = "hybridnet_error_invalid_argument")
  expect_error(hn_tensor(data.frame(s = "a")), "'x' must be a numeric vector",
               class = "hybridnet_error_invalid_argument")
})

test_that("forward takes tensors or R arrays; a closed tensor is an error", {
  net <- hn_linear(c(0.5, -1))
  x <- hn_tensor(matrix(c(2, 4), 1, 2))
  out <- hn_forward(net, x)
  expect_true(is(out, "HybridnetTensor"))
  expect_identical(as.array(out), matrix(-3, 1, 1))
  expect_identical(as.array(hn_forward(net, list(x))), matrix(-3, 1, 1))
  expect_identical(hn_forward(net, matrix(c(2, 4), 1, 2)), matrix(-3, 1, 1))
  loss <- hn_forward(hn_loss("L2Loss"), list(out, hn_tensor(matrix(-1, 1, 1))))
  expect_identical(as.array(loss), 2)
  hn_free(x)
  expect_error(hn_forward(net, x), "closed", class = "hybridnet_error_invalid_argument")
  expect_error(hn_forward(net, list()), "takes one input, got 0")
})

test_that("record and pause restore both flags after errors and non-local exits", {
  expect_error(hn_autograd_record(hn_autograd_pause(stop("deep"), train_mode = TRUE)), "deep")
  expect_false(hn_is_recording())
  expect_false(hn_is_training())
  escape <- function() {
    hn_autograd_record(return("left"))
    "not reached"
  }
  expect_identical(escape(), "left")
  expect_false(hn_is_recording())
  expect_false(hn_is_training())
  expect_identical(withRestarts(hn_autograd_record(invokeRestart("out", 7)),
                                out = function(v) v), 7)
  expect_false(hn_is_recording())
  expect_error(hn_autograd_record(1, train_mode = NA), "'train_mode' must be TRUE or FALSE")
  expect_false(hn_is_recording())
})

test_that("record, backward and grad give the gradient; pause and errors restore the state", {
  x <- hn_tensor(c(1, 2, 3))
  hn_attach_grad(x)
  expect_false(hn_is_recording())
  y <- hn_autograd_record({
    expect_true(hn_is_recording())
    expect_true(hn_is_training())
    hn_autograd_pause(expect_false(hn_is_recording()))
    expect_true(hn_is_recording())
    hn_sum(x)
  })
  expect_false(hn_is_recording())
  expect_false(hn_is_training())
  backward(y)
  expect_identical(as.array(grad(x)), c(1, 1, 1))

  z <- hn_tensor(c(1, 2))
  hn_attach_grad(z, "add")
  for (i in 1:2) backward(hn_autograd_record(hn_sum(z)))
  expect_identical(as.array(grad(z)), c(2, 2))

  expect_error(hn_autograd_record(stop("inside")), "inside")
  expect_false(hn_is_recording())
  expect_false(hn_autograd_record(hn_is_training(), train_mode = FALSE))
  d <- hn_autograd_record(hn_sum(hn_detach(x)))
  expect_error(backward(d), class = "hybridnet_error_invalid_argument")
})

test_that("parameter gradients, attributes and zero_grad follow MXNet", {
  net <- hn_linear(c(0.5, -1))
  name <- hn_param_names(net)
  expect_length(name, 1L)
  loss_fn <- hn_loss("L2Loss")
  x <- hn_tensor(matrix(c(2, 3), 1, 2))
  loss <- hn_autograd_record(hn_forward(loss_fn, list(hn_forward(net, x), hn_tensor(1))))
  backward(loss)
  # L2Loss = (pred - label)^2 / 2, pred = 0.5 * 2 - 1 * 3 = -2: dL/dw = (pred - label) * x.
  expect_equal(as.array(loss), 4.5)
  expect_equal(as.array(hn_param_grad(net, name)), matrix(c(-6, -9), 1, 2))
  hn_zero_grad(net)
  expect_identical(as.array(hn_param_grad(net, name)), matrix(0, 1, 2))

  expect_identical(hn_param_attr(net, name, "grad_req"), "write")
  hn_set_param_attr(net, "lr_mult", 0.5, name = name)
  expect_identical(hn_param_attr(net, name, "lr_mult"), 0.5)
  hn_set_param_attr(net, "wd_mult", 2)
  expect_identical(hn_param_attr(net, name, "wd_mult"), 2)
  hn_set_param_attr(net, "grad_req", "null")
  expect_error(hn_param_grad(net, name), class = "hybridnet_error_invalid_argument")
  expect_error(hn_param_attr(net, name, "momentum"), class = "hybridnet_error_invalid_argument")
  expect_error(hn_param_grad(net, "nope"), class = "hybridnet_error_not_found")
})

test_that("an SGD step is w - lr * grad / batch_size; the learning rate reads and changes", {
  net <- hn_linear(c(0.5, -1))
  trainer <- hn_trainer(net, "sgd", list(learning_rate = 0.1))
  expect_equal(hn_learning_rate(trainer), 0.1, tolerance = 1e-7)
  x <- hn_tensor(matrix(c(2, 3, 2, 3), 2, 2, byrow = TRUE))
  loss_fn <- hn_loss("L2Loss")
  step <- function() {
    loss <- hn_autograd_record(hn_forward(loss_fn, list(hn_forward(net, x), hn_tensor(c(1, 1)))))
    backward(loss)
    hn_trainer_step(trainer, 2)
  }
  step()
  # Both rows give the gradient (-6, -9); their sum over batch_size 2 is (-6, -9).
  expect_equal(hn_weight(net), matrix(c(0.5 + 0.6, -1 + 0.9), 1, 2), tolerance = 1e-6)
  hn_set_learning_rate(trainer, 0)
  expect_identical(hn_learning_rate(trainer), 0)
  before <- hn_weight(net)
  step()
  expect_identical(hn_weight(net), before)
})

test_that("every optimizer of the core trains; .states files round-trip", {
  names <- c("sgd", "nag", "adam", "adamax", "nadam", "rmsprop", "adagrad", "adadelta", "signum",
             "ftml", "ftrl", "lamb", "lars", "dcasgd", "sgld", "ccsgd")
  dir <- hn_test_dir("states")
  for (name in names) {
    net <- hn_linear(c(0.5, -1))
    trainer <- hn_trainer(net, name, list(learning_rate = 0.01))
    loss <- hn_autograd_record(hn_forward(hn_loss("L2Loss"),
                                          list(hn_forward(net, hn_tensor(matrix(c(2, 3), 1))),
                                               hn_tensor(1))))
    backward(loss)
    hn_trainer_step(trainer, 1)
    expect_false(identical(hn_weight(net), matrix(c(0.5, -1), 1, 2)), label = name)
    path <- file.path(dir, paste0(name, ".states"))
    hn_save_states(trainer, path)
    hn_load_states(hn_trainer(net, name, list(learning_rate = 0.01)), path)
  }
  adam <- hn_trainer(hn_linear(c(1, 1)), "adam")
  expect_error(hn_load_states(adam, file.path(dir, "sgd.states")),
               class = "hybridnet_error_invalid_argument")
})

test_that("hybridized training gives the eager numbers bit for bit", {
  train <- function(hybridize) {
    net <- hn_sequential(hn_dense(8, "relu", in_units = 4), hn_dense(3, in_units = 8))
    hn_initialize(net, "xavier", seed = 3)
    if (hybridize) hn_hybridize(net)
    trainer <- hn_trainer(net, "adam", list(learning_rate = 0.01))
    loss_fn <- hn_loss("SoftmaxCrossEntropyLoss")
    x <- hn_tensor(matrix(sin(1:40), 10, 4))
    y <- hn_tensor(rep(0:2, length.out = 10))
    losses <- numeric(0)
    for (i in 1:5) {
      loss <- hn_autograd_record(hn_forward(loss_fn, list(hn_forward(net, x), y)))
      backward(loss)
      hn_trainer_step(trainer, 10)
      losses[[i]] <- as.array(hn_sum(loss))
    }
    list(losses = losses, params = unname(hn_parameters(net)))
  }
  eager <- train(FALSE)
  expect_lt(eager$losses[[5]], eager$losses[[1]])
  expect_identical(train(TRUE), eager)
})

test_that("losses are the C API's loss kinds", {
  pred <- hn_tensor(matrix(c(2, 0, 0, 2), 2))
  ce <- as.array(hn_forward(hn_loss("SoftmaxCrossEntropyLoss"), list(pred, hn_tensor(c(0, 1)))))
  expect_equal(ce, rep(log(1 + exp(-2)), 2), tolerance = 1e-6)
  soft <- hn_loss("SoftmaxCrossEntropyLoss", sparse_label = FALSE)
  expect_equal(as.array(hn_forward(soft, list(pred, hn_tensor(diag(2))))), ce, tolerance = 1e-6)
  expect_error(hn_loss("Dense"), class = "hybridnet_error_not_found")
  expect_error(hn_loss("NoSuchLoss"), class = "hybridnet_error")
  expect_error(hn_loss("L2Loss", weight = "heavy"), class = "hybridnet_error_invalid_argument")
})

test_that("metrics update, read and reset as MXNet's", {
  acc <- hn_metric("acc")
  expect_true(is.nan(hn_metric_get(acc)[["accuracy"]]))
  hn_metric_update(acc, c(0, 1, 1), matrix(c(0.9, 0.2, 0.6, 0.1, 0.8, 0.4), 3))
  expect_equal(hn_metric_get(acc), c(accuracy = 2 / 3))
  hn_metric_update(acc, hn_tensor(1), hn_tensor(matrix(c(0, 1), 1)))
  expect_equal(hn_metric_get(acc)[[1]], 3 / 4)
  hn_metric_reset(acc, local_only = TRUE)
  expect_true(is.nan(hn_metric_get(acc)[[1]]))
  expect_equal(hn_metric_get(acc, global = TRUE)[[1]], 3 / 4)
  topk <- hn_metric("top_k_acc", top_k = 2)
  hn_metric_update(topk, 2, matrix(c(0.5, 0.3, 0.2), 1))
  expect_equal(hn_metric_get(topk)[[1]], 0)
  expect_error(hn_metric("nope"), class = "hybridnet_error_not_found")
  expect_error(hn_metric("acc", bogus = 1), class = "hybridnet_error_invalid_argument")
  expect_error(hn_metric_update(acc, c(0, 1), matrix(0, 3, 2)), class = "hybridnet_error_shape")
})

test_that("data loaders batch R arrays and tensors as MXNet's DataLoader", {
  x <- matrix(as.numeric(1:10), 5, 2)
  y <- c(10, 11, 12, 13, 14)
  loader <- hn_data_loader(x, hn_tensor(y), batch_size = 2)
  expect_identical(hn_num_batches(loader), 3)
  batches <- list()
  while (!is.null(b <- hn_next_batch(loader))) batches[[length(batches) + 1L]] <- b
  expect_length(batches, 3L)
  expect_identical(as.array(batches[[1]][[1]]), x[1:2, ])
  expect_identical(as.array(batches[[3]][[1]]), matrix(x[5, ], 1))
  expect_identical(as.array(batches[[3]][[2]]), 14)
  hn_reset(loader)
  expect_identical(as.array(hn_next_batch(loader)[[2]]), c(10, 11))

  order_of <- function(seed) {
    l <- hn_data_loader(y, batch_size = 5, shuffle = TRUE, seed = seed)
    c(as.array(hn_next_batch(l)[[1]]), {hn_reset(l); as.array(hn_next_batch(l)[[1]])})
  }
  expect_identical(order_of(42), order_of(42))
  expect_setequal(order_of(42)[1:5], y)
  expect_identical(hn_num_batches(hn_data_loader(y, batch_size = 2, last_batch = "discard")), 2)
  expect_error(hn_data_loader(x, 1:4, batch_size = 2), class = "hybridnet_error_shape")
  expect_error(hn_data_loader(x, batch_size = 0), class = "hybridnet_error_invalid_argument")
  expect_error(hn_data_loader(x, batch_size = 2, last_batch = "drop"),
               class = "hybridnet_error_invalid_argument")
  expect_error(hn_data_loader(batch_size = 2), class = "hybridnet_error_invalid_argument")
})

test_that("bad input is a classed condition, never a crash", {
  net <- hn_linear(c(1, 2))
  x <- hn_tensor(matrix(1, 1, 2))
  e <- expect_error(backward(hn_forward(net, x)), class = "hybridnet_error_invalid_argument")
  expect_match(conditionMessage(e), "record", ignore.case = TRUE)
  expect_error(grad(x), class = "hybridnet_error_invalid_argument")
  expect_error(hn_attach_grad(x, "sometimes"), class = "hybridnet_error_invalid_argument")
  expect_error(hn_attach_grad(matrix(1)), class = "hybridnet_error_invalid_argument")
  expect_error(hn_trainer(net, "nosuch"), class = "hybridnet_error_not_found")
  expect_error(hn_trainer(net, "sgd", list(bogus = 1)), class = "hybridnet_error_invalid_argument")
  expect_error(hn_trainer(net, "sgd", list(0.1)), class = "hybridnet_error_invalid_argument")
  expect_error(hn_trainer("net", "sgd"), class = "hybridnet_error_invalid_argument")
  trainer <- hn_trainer(net, "sgd")
  expect_error(hn_trainer_step(trainer, 1), class = "hybridnet_error_invalid_argument")  # stale
  expect_error(hn_trainer_step(trainer, 0), class = "hybridnet_error_invalid_argument")
  expect_error(hn_set_learning_rate(trainer, NA), class = "hybridnet_error_invalid_argument")
  expect_error(hn_forward(net, hn_tensor(matrix(1, 1, 3))), class = "hybridnet_error_shape")
  hn_free(trainer)
  expect_true(hn_is_closed(trainer))
  expect_error(hn_trainer_step(trainer, 1), class = "hybridnet_error_invalid_argument")
  expect_error(hn_learning_rate(trainer), "closed")
  hn_free(net)
  expect_error(hn_trainer(net, "sgd"), "closed")
  expect_error(hn_forward(net, x), "closed")
  hn_free(x)
  expect_error(hn_sum(x), "closed")
  expect_error(as.array(x), "closed")
  m <- hn_metric("acc")
  hn_free(m)
  expect_error(hn_metric_get(m), "closed")
  l <- hn_data_loader(1:4, batch_size = 2)
  hn_free(l)
  expect_error(hn_next_batch(l), "closed")
  expect_error(hn_next_batch(serialize(l, NULL)), class = "hybridnet_error_invalid_argument")
  restored <- unserialize(serialize(hn_tensor(1), NULL))
  expect_error(hn_sum(restored), "closed")
  expect_error(hybridnet:::c_hn_autograd_mark_variables(list(hn_tensor(1)@handle), 1:2),
               class = "hybridnet_error_invalid_argument")
})

test_that("training steps left to the garbage collector free every handle", {
  invisible(gc())
  live0 <- hn_live_handles()
  local({
    net <- hn_sequential(hn_dense(4, "relu", in_units = 3), hn_dense(2, in_units = 4))
    hn_initialize(net)
    hn_hybridize(net)
    trainer <- hn_trainer(net, "sgd", list(learning_rate = 0.1))
    loss_fn <- hn_loss("SoftmaxCrossEntropyLoss")
    loader <- hn_data_loader(matrix(runif(24), 8, 3), rep(0:1, 4), batch_size = 4)
    acc <- hn_metric("acc")
    while (!is.null(b <- hn_next_batch(loader))) {
      out <- NULL
      loss <- hn_autograd_record({
        out <- hn_forward(net, b[[1]])
        hn_forward(loss_fn, list(out, b[[2]]))
      })
      backward(loss)
      hn_trainer_step(trainer, 4)
      hn_metric_update(acc, b[[2]], out)
    }
    expect_gt(sum(hn_live_handles()), sum(live0))
  })
  invisible(gc())
  expect_identical(hn_live_handles(), live0)
})
