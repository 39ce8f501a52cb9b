# Building a model in R, hybridizing it and exporting it for C/C++.

mlp <- function(seed = 3) {
  net <- hn_sequential(hn_dense(64, "relu"), hn_dense(32, "tanh"), hn_dense(5))
  hn_initialize(net, seed = seed)
  net
}

test_that("eager and hybridized forwards give identical numbers", {
  net <- mlp()
  set.seed(3)
  x <- matrix(runif(6 * 20), nrow = 6)
  eager <- hn_forward(net, x)
  expect_identical(dim(eager), c(6L, 5L))
  expect_identical(hn_forward(net, x), eager)
  hn_hybridize(net)
  expect_identical(hn_forward(net, x), eager)
  expect_identical(hn_forward(net, x), eager)   # the cached graph
  expect_identical(predict(net, x), eager)
  expect_identical(dim(hn_forward(net, rbind(x, x))), c(12L, 5L))  # a new shape re-plans
})

test_that("a model built in R exports and loads in C++ (hybridnet run) with the same numbers", {
  dir <- hn_test_dir("r-export")
  net <- mlp()
  set.seed(4)
  x <- matrix(runif(7 * 20), nrow = 7)
  eager <- hn_forward(net, x)
  hn_hybridize(net)
  expect_identical(hn_forward(net, x), eager)
  files <- hn_export(net, file.path(dir, "rnet"), epoch = 3)
  expect_identical(unname(files), file.path(dir, c("rnet-symbol.json", "rnet-0003.params")))
  expect_true(all(file.exists(files)))

  hn_write_npy(x, file.path(dir, "x.npy"))
  expect_identical(hn_cli_run(file.path(dir, "rnet"), 3, file.path(dir, "x.npy"),
                              file.path(dir, "y.npy")), eager)
})

test_that("an export loads back in R as a model and as a block", {
  dir <- hn_test_dir("r-roundtrip")
  net <- mlp()
  hn_hybridize(net)
  x <- matrix(runif(2 * 20), nrow = 2)
  y <- hn_forward(net, x)
  prefix <- file.path(dir, "rt")
  hn_export(net, prefix)
  expect_identical(predict(hn_load(prefix, 0), x), y)
  imported <- hn_import(prefix, 0)
  expect_identical(hn_forward(imported, x), y)
  hn_hybridize(imported)
  expect_identical(hn_forward(imported, x), y)
})

test_that("a seed gives the same weights, another seed others", {
  # Shapes (and so the weights of layers without in_units) are known at the first forward,
  # which draws from the generator as it is then: forward before initializing another model.
  x <- matrix(1, 1, 20)
  a <- mlp(seed = 11)
  hn_forward(a, x)
  b <- mlp(seed = 11)
  hn_forward(b, x)
  c <- mlp(seed = 12)
  hn_forward(c, x)
  pa <- hn_parameters(a)
  expect_true(all(grepl("_(weight|bias)$", names(pa))))
  expect_length(pa, 6L)
  expect_identical(unname(pa), unname(hn_parameters(b)))
  expect_false(identical(unname(pa), unname(hn_parameters(c))))
  expect_identical(dim(pa[[1]]), c(64L, 20L))
})

test_that("parameters save and load", {
  dir <- hn_test_dir("params")
  net <- mlp(seed = 5)
  x <- matrix(runif(20), 1)
  y <- hn_forward(net, x)
  hn_save_parameters(net, file.path(dir, "mlp.params"))
  other <- mlp(seed = 6)
  hn_forward(other, x)
  expect_false(identical(hn_forward(other, x), y))
  hn_load_parameters(other, file.path(dir, "mlp.params"))
  expect_identical(hn_forward(other, x), y)
})

test_that("the symbolic program and the printed tree are MXNet's", {
  net <- mlp()
  hn_forward(net, matrix(0, 1, 20))
  json <- hn_to_json(net)
  expect_match(json, "\"op\": \"FullyConnected\"", fixed = TRUE)
  expect_match(json, "\"act_type\": \"relu\"", fixed = TRUE)
  expect_output(print(net), "HybridSequential(", fixed = TRUE)
  expect_output(print(net), "Dense(20 -> 64, Activation(relu))", fixed = TRUE)
})

test_that("other layers and containers build", {
  net <- hn_sequential(hn_flatten(), hn_dense(4, use_bias = FALSE), hn_activation("sigmoid"),
                       hn_dropout(0.5), hybrid = FALSE)
  hn_add(net, hn_dense(2, flatten = TRUE, prefix = "out_"))
  hn_initialize(net, initializer = "xavier", seed = 1)
  y <- hn_forward(net, array(1, c(3, 2, 5)))
  expect_identical(dim(y), c(3L, 2L))
  expect_output(print(net), "Sequential")
})
