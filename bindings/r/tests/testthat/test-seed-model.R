# Loading the seed walkthrough's export (written by C++) and running it from R.

test_that("the seed export gives the same numbers in R as in C (hybridnet run)", {
  prefix <- hn_seed_export()
  model <- hn_load(prefix, 0)
  expect_s4_class(model, "HybridnetModel")
  expect_identical(hn_input_names(model), "data")
  expect_length(hn_output_names(model), 1L)

  set.seed(1)
  x <- matrix(rnorm(4 * 512), nrow = 4)       # 4 examples, one per row
  dir <- hn_test_dir("seed-compare")
  hn_write_npy(x, file.path(dir, "x.npy"))
  y_c <- hn_cli_run(prefix, 0, file.path(dir, "x.npy"), file.path(dir, "y.npy"))

  y <- predict(model, x)
  expect_identical(dim(y), c(4L, 2L))
  expect_identical(y, y_c)                    # bit-identical float32 values

  # One example at a time gives the same rows (another GEMM shape: float tolerance).
  for (i in 1:4) expect_equal(predict(model, x[i, ]), y[i, , drop = FALSE], tolerance = 1e-5)
  hn_free(model)
})

test_that("mx.model.load gives the same model with MXNet R's layout by default", {
  prefix <- hn_seed_export()
  model <- hn_load(prefix, 0)
  mx <- mx.model.load(prefix, iteration = 0)
  set.seed(2)
  x <- matrix(runif(3 * 512), nrow = 3)
  y <- predict(model, x)
  # MXNet's R package: dim(X) = reversed model shape, examples in columns, output likewise.
  expect_identical(predict(mx, t(x)), t(y))
  expect_identical(predict(mx, x, layout = "rowmajor"), y)
  expect_identical(predict(mx, x, array.layout = "rowmajor"), y)
  expect_identical(predict(model, t(x), layout = "colmajor"), t(y))
  expect_output(show(mx), "colmajor")
})

test_that("a new batch size re-plans and inputs can be integer, logical or a data frame", {
  model <- hn_load(hn_seed_export(), 0)
  x <- matrix(rep(0:1, length.out = 2 * 512), nrow = 2)
  y <- predict(model, x)
  expect_identical(predict(model, x * 1.0), y)
  expect_identical(predict(model, x == 1L), y)
  expect_identical(predict(model, as.data.frame(x)), y)
  expect_identical(dim(predict(model, rbind(x, x, x))), c(6L, 2L))
  expect_identical(predict(model, list(data = x)), y)
})

test_that("the model loads from memory buffers as well", {
  prefix <- hn_seed_export()
  json_file <- paste0(prefix, "-symbol.json")
  json <- readChar(json_file, file.size(json_file), useBytes = TRUE)
  params_file <- paste0(prefix, "-0000.params")
  params <- readBin(params_file, "raw", file.size(params_file))
  from_memory <- hn_load_buffers(json, params)
  x <- matrix(runif(512), 1)
  expect_identical(predict(from_memory, x), predict(hn_load(prefix, 0), x))
  expect_output(show(from_memory), "memory")
})
