# Runs examples/r (predict.R, walkthrough.R) and compares predict.R with the C++ CLI.
#   Rscript run_examples.R <examples/r>     (R_LIBS, HYBRIDNET_CLI, HYBRIDNET_SEED_WALKTHROUGH
#                                             and HYBRIDNET_TEST_TMPDIR come from CTest)
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) == 1L)
examples <- normalizePath(args[[1L]])
suppressPackageStartupMessages(library(hybridnet))
rscript <- file.path(R.home("bin"), "Rscript")
dir <- file.path(Sys.getenv("HYBRIDNET_TEST_TMPDIR", tempdir()), "examples")
dir.create(dir, recursive = TRUE, showWarnings = FALSE)
failures <- 0L
check <- function(ok, what) {
  cat(if (ok) "ok:  " else "FAIL:", what, "\n")
  if (!ok) failures <<- failures + 1L
}
run <- function(cmd, args) {
  out <- suppressWarnings(system2(cmd, args, stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  list(status = if (is.null(status)) 0L else status, out = out)
}

# The seed export (C++), an input, the C++ CLI's output, predict.R's output.
seed <- run(Sys.getenv("HYBRIDNET_SEED_WALKTHROUGH"), c("--out", shQuote(dir)))
check(seed$status == 0L, "seed_walkthrough wrote the export")
prefix <- file.path(dir, "seed_mlp")
set.seed(7)
hn_write_npy(matrix(rnorm(5 * 512), nrow = 5), file.path(dir, "input.npy"))
cli <- run(Sys.getenv("HYBRIDNET_CLI"),
           c("run", shQuote(prefix), "0", "--input", shQuote(paste0("data=", file.path(dir, "input.npy"))),
             "--output", shQuote(file.path(dir, "cli.npy"))))
check(cli$status == 0L, "hybridnet run (C++) ran")
r <- run(rscript, c(shQuote(file.path(examples, "predict.R")), shQuote(prefix), "0",
                    shQuote(file.path(dir, "input.npy")), shQuote(file.path(dir, "r.npy"))))
cat(r$out, sep = "\n")
check(r$status == 0L, "predict.R ran")
check(identical(hn_read_npy(file.path(dir, "r.npy")), hn_read_npy(file.path(dir, "cli.npy"))),
      "predict.R's output equals the C++ CLI's, bit for bit")
check(identical(dim(hn_read_npy(file.path(dir, "r.npy"))), c(5L, 2L)), "output shape (5, 2)")

bad <- run(rscript, c(shQuote(file.path(examples, "predict.R")), shQuote(file.path(dir, "missing")),
                      "0", shQuote(file.path(dir, "input.npy")), shQuote(file.path(dir, "x.npy"))))
check(bad$status == 1L && any(grepl("HN_ERR_IO", bad$out)), "a missing model: exit 1 and HN_ERR_IO")
usage <- run(rscript, shQuote(file.path(examples, "predict.R")))
check(usage$status == 2L, "no arguments: usage, exit 2")

walk <- run(rscript, c(shQuote(file.path(examples, "walkthrough.R")), "--out", shQuote(dir)))
cat(tail(walk$out, 8), sep = "\n")
check(walk$status == 0L, "walkthrough.R ran")
check(sum(grepl("TRUE *$", walk$out)) == 4L && !any(grepl("FALSE *$", walk$out)),
      "walkthrough.R: eager, hybridized, loaded and imported outputs identical")
wcli <- run(Sys.getenv("HYBRIDNET_CLI"),
            c("run", shQuote(file.path(dir, "r_mlp")), "0", "--input",
              shQuote(paste0("data=", file.path(dir, "input.npy"))), "--output", shQuote(file.path(dir, "wcli.npy"))))
check(wcli$status == 0L &&
        identical(hn_read_npy(file.path(dir, "wcli.npy")),
                  predict(hn_load(file.path(dir, "r_mlp"), 0), hn_read_npy(file.path(dir, "input.npy")))),
      "the walkthrough's export runs in C++ with R's numbers")
# train_digits.R needs the digits split, which Python writes (the cross_language tests train with
# it); here its command line and its errors.
train <- file.path(examples, "train_digits.R")
for (args in list(character(), "--epochs", c("d", "--epochs", "0"), c("d", "--optimizer", "sgdx"),
                  c("d", "--bogus", "1"))) {
  check(run(rscript, c(shQuote(train), args))$status == 2L,
        sprintf("train_digits.R %s: usage, exit 2", paste(args, collapse = " ")))
}
no_data <- run(rscript, c(shQuote(train), shQuote(file.path(dir, "no-data"))))
check(no_data$status == 1L && any(grepl("no-data/digits_train_images.npy", no_data$out, fixed = TRUE)),
      "train_digits.R without its data: exit 1 naming the file")
if (failures > 0L) quit(status = 1L)
cat("r.examples: all checks passed\n")
