# Runs the R package's testthat tests against the installed package (R_LIBS from CTest).
#   Rscript run_testthat.R <bindings/r/tests/testthat>
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) == 1L)
library(testthat)
library(hybridnet)
results <- testthat::test_dir(args[[1L]], package = "hybridnet", load_package = "installed",
                              reporter = testthat::SummaryReporter$new(show_praise = FALSE),
                              stop_on_failure = TRUE)
df <- as.data.frame(results)
cat(sprintf("r.testthat: %d test blocks, %d expectations, %d failed, %d skipped, %d errors\n",
            nrow(df), sum(df$nb), sum(df$failed), sum(df$skipped), sum(df$error)))
