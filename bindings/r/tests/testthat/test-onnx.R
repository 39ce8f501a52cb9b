# hn_export_onnx writes the very file `hybridnet convert` does (checked in ONNX Runtime by the
# ONNX tests), and reports bad arguments as R errors.

test_that("hn_export_onnx writes what hybridnet convert writes", {
  prefix <- hn_seed_export()
  cli <- hn_program("HYBRIDNET_CLI")
  dir <- hn_test_dir("onnx")
  ours <- file.path(dir, "r.onnx")
  theirs <- file.path(dir, "cli.onnx")
  model <- hn_load(prefix, 0)
  expect_identical(hn_export_onnx(model, ours, list(data = c(4, 512)), opset = 21L,
                                  dynamic_batch = TRUE), ours)
  status <- system2(cli, c("convert", shQuote(paste0(prefix, "-symbol.json,", prefix, "-0000.params")),
                           shQuote(theirs), "--input", "data=4,512", "--opset", "21",
                           "--dynamic-batch"), stdout = FALSE, stderr = FALSE)
  expect_identical(status, 0L)
  bytes <- readBin(theirs, "raw", file.size(theirs))
  expect_gt(length(bytes), 512 * 4)
  expect_identical(readBin(ours, "raw", file.size(ours)), bytes)
  # mx.model.load models take shapes in MXNet R's (reversed) layout.
  mx <- mx.model.load(prefix, iteration = 0)
  reversed <- file.path(dir, "mx.onnx")
  hn_export_onnx(mx, reversed, list(data = c(512, 4)), opset = 21L, dynamic_batch = TRUE)
  expect_identical(readBin(reversed, "raw", file.size(reversed)), bytes)
  hn_free(model)
  hn_free(mx)
})

test_that("hn_export_onnx reports bad arguments", {
  model <- hn_load(hn_seed_export(), 0)
  path <- file.path(hn_test_dir("onnx-errors"), "m.onnx")
  expect_error(hn_export_onnx(model, path, list(data = c(1, 512)), opset = 12L), "opset")
  expect_error(hn_export_onnx(model, path, list(pixels = c(1, 512))), "'pixels'",
               class = "hybridnet_error")
  expect_error(hn_export_onnx(model, path, c(1, 512)), "named list")
  expect_error(hn_export_onnx(model, path, list(data = c(1, 512)), dynamic_batch = NA),
               "TRUE or FALSE")
  hn_free(model)
  expect_error(hn_export_onnx(model, path, list(data = c(1, 512))), "closed")
})
