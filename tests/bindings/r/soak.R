# Soak of the R package: model/predictor/tensor create-forward-free cycles on the seed export,
# every 5th with a training step (a data loader's batch, a recorded forward and loss, backward,
# a trainer step, a metric; a new trainer every 10th step), freed with hn_free() and left to
# gc(); the RSS, the package's handles (hn_live_handles) and
# the native library's (hn_debug_live_handles) stay flat. CTest runs it short (r.soak, in
# `make test`); `make soak` runs it long through HYBRIDNET_SOAK_CYCLES.
#   Rscript soak.R <seed_walkthrough program> <work dir>
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) == 2L)
suppressPackageStartupMessages(library(hybridnet))

env_int <- function(name, fallback) {
  value <- Sys.getenv(name)
  if (!nzchar(value)) return(fallback)
  n <- suppressWarnings(as.integer(value))
  if (is.na(n) || n <= 0L) stop(sprintf("%s must be a positive integer, got '%s'", name, value))
  n
}
cycles <- env_int("HYBRIDNET_SOAK_CYCLES", 5000L)
warm_up <- max(1000L, cycles %/% 10L)
gc_every <- 200L
# After warm-up the RSS may move by allocator noise, not by a leak.
rss_tolerance_kb <- 16 * 1024

rss_kb <- function() {
  status <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmRSS:", status, value = TRUE)))
}
native_handles <- function() hybridnet:::c_hn_debug_live_handles()

dir.create(args[[2L]], recursive = TRUE, showWarnings = FALSE)
log <- system2(args[[1L]], c("--out", shQuote(args[[2L]])), stdout = TRUE, stderr = TRUE)
if (!is.null(attr(log, "status"))) stop(paste(c("seed_walkthrough failed:", log), collapse = "\n"))
prefix <- file.path(args[[2L]], "seed_mlp")

set.seed(7)
x <- matrix(rnorm(512), 1)
expected <- local({
  m <- hn_load(prefix)
  on.exit(hn_free(m))
  predict(m, x)
})

# What the training steps share: a small hybridized MLP, its loss, its trainer and the data.
net <- hn_sequential(hn_dense(16, "relu", in_units = 8), hn_dense(2, in_units = 16))
hn_initialize(net, "xavier", seed = 3)
hn_hybridize(net)
loss_fn <- hn_loss("SoftmaxCrossEntropyLoss")
trainer <- hn_trainer(net, "sgd", list(learning_rate = 0.01))
train_x <- hn_tensor(matrix(sin(1:256), 32, 8))
train_y <- hn_tensor(rep(0:1, 16))

# Training step i on a new loader's first batch, with a new metric (and every 10th step a new
# trainer, which also makes an optimizer).
train_step <- function(free, i) {
  step_trainer <- trainer
  if (i %% 10L == 0L) step_trainer <- hn_trainer(net, "adam", list(learning_rate = 0.001))
  loader <- hn_data_loader(train_x, train_y, batch_size = 8, shuffle = TRUE, seed = i)
  batch <- hn_next_batch(loader)
  out <- NULL
  loss <- hn_autograd_record({
    out <- hn_forward(net, batch[[1L]])
    hn_forward(loss_fn, list(out, batch[[2L]]))
  })
  backward(loss)
  hn_trainer_step(step_trainer, 8)
  acc <- hn_metric("acc")
  hn_metric_update(acc, batch[[2L]], out)
  total <- hn_sum(loss)
  if (!is.finite(as.array(total)) || !is.finite(hn_metric_get(acc)[[1L]])) stop("training diverged")
  if (free) {
    for (h in c(batch, list(out, loss, total, acc, loader))) hn_free(h)
    if (!identical(step_trainer, trainer)) hn_free(step_trainer)
  }
}

# Cycle i: a model, its predictor and output tensors (predict), an input tensor, and every 5th
# cycle a training step.
cycle <- function(free, i) {
  model <- hn_load(prefix)
  y <- predict(model, x)
  t <- hybridnet:::c_hn_tensor_create(0L, c(1, 512), as.vector(x))
  if (!identical(y, expected)) stop("wrong output")
  if (free) {
    hybridnet:::c_hn_tensor_free(t)
    hn_free(model)
  }
  if (i %% 5L == 0L) train_step(free, i %/% 5L)
}

passed <- 0L
failures <- character()
check <- function(ok, what) {
  if (isTRUE(ok)) passed <<- passed + 1L else failures <<- c(failures, what)
}

invisible(gc())
package0 <- hn_live_handles()
native_start <- native_handles()
cat(sprintf("soak: %d cycles; R %s; %s; OPENBLAS_NUM_THREADS=%s, kernel threads %d\n", cycles,
            getRversion(), hn_version()[["library"]], Sys.getenv("OPENBLAS_NUM_THREADS", "unset"),
            hn_num_threads()))

for (variant in c("freed", "gc")) {
  free <- variant == "freed"
  for (i in seq_len(warm_up)) {
    cycle(free, i)
    if (i %% gc_every == 0L) invisible(gc())
  }
  invisible(gc())
  native0 <- native_handles()
  rss0 <- rss_kb()
  peak <- 0
  seconds <- system.time({
    for (i in seq_len(cycles)) {
      cycle(free, i)
      if (i %% gc_every == 0L) {
        peak <- max(peak, native_handles() - native0)
        invisible(gc())
      }
    }
    invisible(gc())
  })[["elapsed"]]
  native1 <- native_handles()
  rss1 <- rss_kb()
  cat(sprintf(paste0("soak %s: %d cycles in %.1f s; RSS %.0f kB -> %.0f kB (%+.0f kB); ",
                     "native handles %.0f -> %.0f (peak +%.0f between gc()); package handles %d -> %d\n"),
              variant, cycles, seconds, rss0, rss1, rss1 - rss0, native0, native1, peak,
              sum(package0), sum(hn_live_handles())))
  check(identical(hn_live_handles(), package0), sprintf("%s: package handles not freed", variant))
  check(native1 == native0 && native1 == native_start,
        sprintf("%s: native handles %.0f, %.0f before", variant, native1, native0))
  check(rss1 - rss0 < rss_tolerance_kb,
        sprintf("%s: RSS grew by %.0f kB over %d cycles", variant, rss1 - rss0, cycles))
  if (!free) check(peak > 0, "gc: nothing was left to the garbage collector")
}

# The objects the steps shared are freed too: then nothing of this package is left.
for (h in list(trainer, loss_fn, net, train_x, train_y)) hn_free(h)
invisible(gc())
check(sum(hn_live_handles()) == 0L, sprintf("%d package handles left at the end",
                                            sum(hn_live_handles())))

for (f in failures) cat("FAILED:", f, "\n")
cat(sprintf("%d passed, %d failed\n", passed, length(failures)))
quit(status = if (length(failures) == 0L) 0L else 1L)
