# The seed MLP (512-256-128-2) at batch 1 through R's predict() vs through the C API
# (bench/binding_bench_c.c, the calls a binding makes per forward: set the input, run, copy the
# output out). Target: R predict() <= C + 20 us per forward.
#
#   ninja -C build bench_r
#   Rscript bench/r_predict_bench.R PREFIX C_BENCH [REPEATS]
#
# One BLAS thread on both sides. Rounds alternate C, R, C, R, ... so load from other processes
# hits both alike; medians over all rounds, and the median of back-to-back pair differences.
# Also timed: the general path (a list of inputs: argument checks and conversions in R, SWIG
# wrappers), which predict() took for every call before its fast path.
library(hybridnet)

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2L) stop("usage: Rscript r_predict_bench.R PREFIX C_BENCH [REPEATS]")
prefix <- args[[1L]]
c_bench <- args[[2L]]
repeats <- if (length(args) > 2L) as.integer(args[[3L]]) else 10L
rounds <- 3L
forwards <- 2000L

hn_num_threads(1)
model <- hn_load(prefix, 0)
x <- matrix(sin(0.1 * (0:511)), nrow = 1)             # the C side's input
general_x <- list(x)

# Microseconds per call of each round of `forwards` calls.
time_rounds <- function(call) {
  vapply(seq_len(rounds), function(r) {
    start <- as.numeric(Sys.time())
    for (i in seq_len(forwards)) call()
    (as.numeric(Sys.time()) - start) * 1e6 / forwards
  }, numeric(1))
}
fast <- function() predict(model, x)
general <- function() predict(model, general_x)

run_c <- function() {
  out <- system2(c_bench, c(shQuote(prefix), rounds, forwards), stdout = TRUE, stderr = TRUE)
  if (!is.null(attr(out, "status"))) stop(paste(c("the C benchmark failed:", out), collapse = "\n"))
  out
}

for (i in seq_len(3000L)) { fast(); general() }       # warm-up: JIT, allocator, plans
c_lines <- run_c()
c_rounds <- r_rounds <- general_rounds <- numeric()
for (rep in seq_len(repeats)) {
  c_rounds <- c(c_rounds, as.numeric(sub("^round_us=", "", grep("^round_us=", run_c(), value = TRUE))))
  r_rounds <- c(r_rounds, time_rounds(fast))
  general_rounds <- c(general_rounds, time_rounds(general))
}
y <- fast()
c_out <- as.numeric(strsplit(sub("^output=", "", grep("^output=", c_lines, value = TRUE)), ",")[[1L]])

cat(sub("^cpu=", "CPU: ", grep("^cpu=", c_lines, value = TRUE)), "\n", sep = "")
cat(sub("^openblas=", "OpenBLAS: ", grep("^openblas=", c_lines, value = TRUE)), "\n", sep = "")
if (file.exists("/proc/loadavg")) cat("load average:", readLines("/proc/loadavg"), "\n")
cat(sprintf("seed MLP 512-256-128-2, batch 1, 1 BLAS thread; %d rounds of %d forwards per path, C and R alternating (R %s)\n",
            length(r_rounds), forwards, getRversion()))
c_median <- median(c_rounds)
row <- function(name, v) {
  cat(sprintf("  %-52s %8.3f us %8.3f us %+9.3f us\n", name, median(v), min(v), median(v) - c_median))
}
cat(sprintf("  %-52s %11s %11s %12s\n", "path", "median", "min", "median - C"))
row("C API: set_input + forward + get_output", c_rounds)
row("R predict(model, x): fast path (one .Call)", r_rounds)
row("R predict(model, list(x)): general path", general_rounds)
paired <- median(r_rounds - c_rounds)
cat(sprintf("  R fast path - C, median of back-to-back round pairs: %+.3f us\n", paired))
cat(sprintf("  outputs: R %s, C %s (%s)\n", paste(format(as.vector(y), digits = 9), collapse = " "),
            paste(format(c_out, digits = 9), collapse = " "),
            if (all(abs(as.vector(y) - c_out) <= 1e-7 * abs(c_out))) "equal" else "DIFFERENT"))
cat(sprintf("target R predict() <= C + 20 us at batch 1: %s (medians %+.3f us, paired %+.3f us)\n",
            if (median(r_rounds) <= c_median + 20 && paired <= 20) "met" else "MISSED",
            median(r_rounds) - c_median, paired))
hn_free(model)
