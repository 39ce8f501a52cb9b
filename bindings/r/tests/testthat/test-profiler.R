# The profiler switches: a hybridized forward and an eager op in the trace and the table, and the
# errors.

hn_table_count <- function(table, name) {
  m <- regmatches(table, regexec(paste0("\n", name, " +([0-9]+) "), table))[[1L]]
  if (length(m) == 0L) -1 else as.numeric(m[[2L]])
}

test_that("a hybridized forward and an eager op are events and rows", {
  trace <- file.path(hn_test_dir("profiler"), "trace.json")
  net <- hn_sequential(hn_dense(8, "relu", in_units = 4), hn_dense(3, in_units = 8))
  hn_initialize(net, seed = 7)
  hn_hybridize(net)
  x <- matrix(seq_len(8) / 8, 2, 4)
  hn_forward(net, x)
  hn_profiler_config(profile_all = TRUE, aggregate_stats = TRUE, filename = trace)
  hn_profiler_state("run")
  expect_identical(hn_profiler_state(), "run")
  hn_forward(net, x)
  hn_profiler_pause()
  hn_forward(net, x)
  hn_profiler_resume()
  hn_profiler_state("stop")
  hn_profiler_dump()
  table <- hn_profiler_dumps(reset = TRUE)
  expect_match(table, "Profile Statistics:", fixed = TRUE)
  expect_identical(hn_table_count(table, "_hn_fully_connected_act"), 1)
  expect_identical(hn_table_count(table, "FullyConnected"), 1)
  json <- paste(readLines(trace, warn = FALSE), collapse = "\n")
  expect_identical(lengths(regmatches(json, gregexpr("\"ph\":\"X\"", json, fixed = TRUE))), 2L)
  expect_match(json, "\"fused\":\"FullyConnected+relu\"", fixed = TRUE)
  hn_profiler_config(profile_all = FALSE, filename = file.path(dirname(trace), "drain.json"))
})

test_that("bad options and unwritable files are classed errors", {
  e <- expect_error(hn_profiler_config(profile_everything = TRUE),
                    class = "hybridnet_error_invalid_argument")
  expect_match(conditionMessage(e), "profile_everything", fixed = TRUE)
  expect_error(hn_profiler_state("go"), class = "hybridnet_error_invalid_argument")
  expect_error(hn_profiler_dumps(format = "xml"), class = "hybridnet_error_invalid_argument")
  old <- file.path(hn_test_dir("profiler"), "drain.json")
  hn_profiler_config(filename = "/nonexistent-hybridnet-dir/trace.json")
  e <- expect_error(hn_profiler_dump(), class = "hybridnet_error_io")
  expect_match(conditionMessage(e), "/nonexistent-hybridnet-dir/trace.json", fixed = TRUE)
  hn_profiler_config(filename = old)
})
