# Errors are R conditions classed by the C API's category, with the C message.

test_that("a missing file is hybridnet_error_io", {
  e <- expect_error(hn_load(file.path(tempdir(), "does-not-exist"), 0),
                    class = "hybridnet_error_io")
  expect_s3_class(e, "hybridnet_error")
  expect_identical(e$status, "HN_ERR_IO")
  expect_identical(e$code, -5L)
  expect_match(conditionMessage(e), "does-not-exist-symbol.json", fixed = TRUE)
})

test_that("malformed and truncated files are hybridnet_error_format", {
  dir <- hn_test_dir("bad-files")
  prefix <- hn_tiny_export(dir)
  bad <- file.path(dir, "bad")
  writeLines("{ this is not json", paste0(bad, "-symbol.json"))
  file.copy(paste0(prefix, "-0000.params"), paste0(bad, "-0000.params"))
  expect_error(hn_load(bad, 0), class = "hybridnet_error_format")

  cut <- file.path(dir, "cut")
  file.copy(paste0(prefix, "-symbol.json"), paste0(cut, "-symbol.json"))
  params <- readBin(paste0(prefix, "-0000.params"), "raw", 1e6)
  writeBin(params[seq_len(length(params) %/% 2)], paste0(cut, "-0000.params"))
  e <- expect_error(hn_load(cut, 0), class = "hybridnet_error_format")
  expect_match(conditionMessage(e), "cut-0000.params", fixed = TRUE)

  expect_error(hn_load_buffers("{}", raw(3)), class = "hybridnet_error")
  expect_error(hn_read_npy(paste0(prefix, "-symbol.json")), class = "hybridnet_error_format")
})

test_that("a wrong input shape is hybridnet_error_shape naming the op", {
  model <- hn_load(hn_tiny_export(), 0)
  e <- expect_error(predict(model, matrix(1, 2, 5)), class = "hybridnet_error_shape")
  expect_match(conditionMessage(e), "FullyConnected")
  expect_identical(dim(predict(model, matrix(1, 2, 4))), c(2L, 3L))  # still usable
  net <- hn_sequential(hn_dense(3, in_units = 4))
  hn_initialize(net)
  expect_error(hn_forward(net, matrix(1, 2, 5)), class = "hybridnet_error_shape")
  expect_error(predict(model, list(matrix(1, 1, 4), matrix(1, 1, 4))), class = "hybridnet_error_shape")
})

test_that("unknown names are hybridnet_error_not_found", {
  model <- hn_load(hn_tiny_export(), 0)
  e <- expect_error(predict(model, list(nope = matrix(1, 1, 4))), class = "hybridnet_error_not_found")
  expect_match(conditionMessage(e), "data")
  expect_error(hn_activation("no_such_activation"), class = "hybridnet_error")
})

test_that("bad arguments are hybridnet_error_invalid_argument", {
  model <- hn_load(hn_tiny_export(), 0)
  net <- hn_sequential(hn_dense(2))
  cls <- "hybridnet_error_invalid_argument"
  expect_error(hn_load(42), class = cls)
  expect_error(hn_load(c("a", "b")), class = cls)
  expect_error(hn_load("x", epoch = -1), class = cls)
  expect_error(hn_load("x", epoch = 1.5), class = cls)
  expect_error(hn_dense(0), class = cls)
  expect_error(hn_dense("a lot"), class = cls)
  expect_error(hn_dense(4, activation = 1), class = cls)
  expect_error(hn_dropout(2), class = cls)
  expect_error(hn_sequential(42), class = cls)
  expect_error(hn_add(net, model), class = cls)
  expect_error(hn_forward(model, 1:4), class = cls)
  expect_error(hn_initialize(model), class = cls)
  expect_error(hn_hybridize(net, active = NA), class = cls)
  expect_error(predict(model, "text"), class = cls)
  expect_error(predict(model, list()), class = cls)
  expect_error(predict(model, matrix(1, 1, 4), layout = "diagonal"), class = cls)
  expect_error(hn_export(net, file.path(tempdir(), "never")), class = cls)  # not traced yet
  expect_error(hn_free(42), class = cls)
  expect_error(hn_write_npy(list(1), file.path(tempdir(), "x.npy")), class = cls)
  expect_warning(predict(model, matrix(1, 1, 4), ctx = "cpu"), "ignored")
})

test_that("closed objects are errors, never crashes; freeing twice is fine", {
  model <- hn_load(hn_tiny_export(), 0)
  predict(model, matrix(1, 1, 4))
  copy <- model                                    # the same native model
  hn_free(model)
  expect_true(hn_is_closed(model))
  expect_true(hn_is_closed(copy))
  expect_error(predict(copy, matrix(1, 1, 4)), class = "hybridnet_error_invalid_argument")
  expect_error(hn_input_names(model), "closed")
  expect_silent(hn_free(model))
  expect_output(show(model), "closed")
  net <- hn_sequential(hn_dense(2))
  hn_free(net)
  expect_error(hn_initialize(net), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_block_initialize(net@handle, "uniform", 0, 0),
               class = "hybridnet_error_invalid_argument")
})

test_that("handlers can select a category", {
  model <- hn_load(hn_tiny_export(), 0)
  got <- tryCatch(predict(model, matrix(1, 1, 9)),
                  hybridnet_error_io = function(e) "io",
                  hybridnet_error_shape = function(e) "shape")
  expect_identical(got, "shape")
})

test_that("a block cannot go inside itself or have two parents", {
  cls <- "hybridnet_error_invalid_argument"
  a <- hn_sequential()
  b <- hn_sequential(hn_dense(2))
  expect_error(hn_add(a, a), class = cls)
  hn_add(a, b)
  expect_error(hn_add(b, a), class = cls)             # a cycle: the C API would recurse forever
  c <- hn_sequential()
  hn_add(b, c)
  expect_error(hn_add(c, a), class = cls)             # a grandparent
  expect_error(hn_add(hn_sequential(), b), class = cls)  # b already has a parent
  expect_output(print(a), "HybridSequential")
})

test_that("a model restored from saveRDS is closed, not a dangling pointer", {
  model <- hn_load(hn_tiny_export(), 0)
  path <- file.path(hn_test_dir("rds"), "model.rds")
  saveRDS(model, path)
  restored <- readRDS(path)
  expect_true(hn_is_closed(restored))
  expect_error(predict(restored, matrix(1, 1, 4)), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_model_input_names(restored@handle),
               class = "hybridnet_error_invalid_argument")
  expect_silent(hn_free(restored))
  expect_identical(dim(predict(model, matrix(1, 1, 4))), c(1L, 3L))
  expect_error(predict(new("HybridnetModel"), 1), class = "hybridnet_error_invalid_argument")
})
