# Shared helpers. The comparisons with C/C++ need the build's programs, given by CTest:
#   HYBRIDNET_CLI               build/bin/hybridnet (its `run` command: the C API, from C++)
#   HYBRIDNET_SEED_WALKTHROUGH  build/bin/seed_walkthrough (writes the seed export)
# Tests that need them skip when they are not set (e.g. R CMD check outside CTest), unless
# HYBRIDNET_TEST_NO_SKIP=1 (CTest sets it: there a missing program is a failure).

hn_test_dir <- function(name) {
  root <- Sys.getenv("HYBRIDNET_TEST_TMPDIR", tempdir())
  dir <- file.path(root, paste0(name, "-", Sys.getpid()))
  dir.create(dir, recursive = TRUE, showWarnings = FALSE)
  normalizePath(dir)
}

# Works in `dir` until the calling test ends, then puts back the working directory and the
# process-wide settings that wrappers called with plausible values change (BLAS threads,
# hostile-input limits, autograd's recording and training flags). Returns the function that
# puts the limits back, for use in between.
hn_local_settings <- function(dir, envir = parent.frame()) {
  old_wd <- setwd(dir)
  old_threads <- hn_num_threads()
  old_limits <- vapply(0:3, function(k) hybridnet:::c_hn_get_limit(k), numeric(1))
  old_autograd <- c(hn_is_recording(), hn_is_training())
  restore_limits <- function() {
    for (k in 0:3) hybridnet:::c_hn_set_limit(k, old_limits[[k + 1L]])
  }
  restore <- function() {
    setwd(old_wd)
    hn_num_threads(old_threads)
    restore_limits()
    hybridnet:::c_hn_autograd_set_recording(as.integer(old_autograd[[1L]]))
    hybridnet:::c_hn_autograd_set_training(as.integer(old_autograd[[2L]]))
  }
  do.call(on.exit, list(as.call(list(restore)), add = TRUE), envir = envir)
  invisible(restore_limits)
}

hn_program <- function(var) {
  path <- Sys.getenv(var)
  if (!nzchar(path) || !file.exists(path)) {
    why <- sprintf("%s is not set to an existing program", var)
    if (Sys.getenv("HYBRIDNET_TEST_NO_SKIP") == "1") stop(why)
    skip(why)
  }
  path
}

# Runs `hybridnet run PREFIX EPOCH --input data=IN --output OUT` and returns OUT's values.
hn_cli_run <- function(prefix, epoch, input_npy, output_npy, input_name = "data") {
  cli <- hn_program("HYBRIDNET_CLI")
  out <- system2(cli, c("run", shQuote(prefix), epoch, "--input",
                        shQuote(paste0(input_name, "=", input_npy)), "--output", shQuote(output_npy)),
                 stdout = TRUE, stderr = TRUE)
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop(paste(c("hybridnet run failed:", out), collapse = "\n"))
  hn_read_npy(output_npy)
}

# The seed walkthrough's export (seed_mlp, epoch 0), made once per test run.
hn_seed_export <- local({
  prefix <- NULL
  function() {
    if (is.null(prefix)) {
      program <- hn_program("HYBRIDNET_SEED_WALKTHROUGH")
      dir <- hn_test_dir("seed")
      log <- system2(program, c("--out", shQuote(dir)), stdout = TRUE, stderr = TRUE)
      status <- attr(log, "status")
      if (!is.null(status) && status != 0) stop(paste(c("seed_walkthrough failed:", log), collapse = "\n"))
      prefix <<- file.path(dir, "seed_mlp")
    }
    prefix
  }
})

# A small model built and exported from R (4 -> 8 relu -> 3), as prefix "<dir>/tiny".
hn_tiny_export <- function(dir = hn_test_dir("tiny")) {
  net <- hn_sequential(hn_dense(8, "relu", in_units = 4), hn_dense(3, in_units = 8))
  hn_initialize(net, seed = 7)
  hn_hybridize(net)
  hn_forward(net, matrix(0, 1, 4))
  prefix <- file.path(dir, "tiny")
  hn_export(net, prefix)
  prefix
}

hn_rss_kb <- function() {
  status <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmRSS:", status, value = TRUE)))
}
