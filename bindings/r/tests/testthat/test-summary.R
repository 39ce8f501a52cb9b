# hn_summary prints the very table `hybridnet summary` prints (checked against MXNet 1.9.1 by
# the golden.viz test), and reports bad arguments as R errors.

test_that("hn_summary gives what hybridnet summary prints", {
  prefix <- hn_seed_export()
  cli <- hn_program("HYBRIDNET_CLI")
  model <- hn_load(prefix, 0)
  ours <- hn_summary(model, list(data = c(4, 512)))
  theirs <- system2(cli, c("summary", shQuote(prefix), "0", "--input", "data=4,512"),
                    stdout = TRUE)
  expect_identical(ours, paste0(paste(theirs, collapse = "\n"), "\n"))
  expect_match(ours, "Total params: [1-9][0-9]*\n")
  expect_identical(hn_summary(model),
                   paste0(paste(system2(cli, c("summary", shQuote(prefix), "0"), stdout = TRUE),
                                collapse = "\n"), "\n"))
  # mx.model.load models take shapes in MXNet R's (reversed) layout.
  mx <- mx.model.load(prefix, iteration = 0)
  expect_identical(hn_summary(mx, list(data = c(512, 4))), ours)
  hn_free(model)
  hn_free(mx)
})

test_that("hn_summary reports bad arguments", {
  model <- hn_load(hn_seed_export(), 0)
  expect_error(hn_summary(model, c(4, 512)), "named list")
  expect_error(hn_summary(model, list(image = c(4, 512))), "'image' is not an input")
  hn_free(model)
  expect_error(hn_summary(model), "closed")
})
