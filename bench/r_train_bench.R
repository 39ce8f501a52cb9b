# One training step of the seed MLP (512-256-128-2, ReLU, hybridized) at batch 64 from R vs
# through the C API (bench/binding_train_bench_c.c, the calls a binding makes per step: copy the
# batch in, record the forward and the loss, backward, trainer step, the loss's sum out, free the
# step's tensors). SoftmaxCrossEntropyLoss, "sgd" learning_rate 0.01. Target: R's per-step time
# <= C's + 15 %.
#
#   ninja -C build bench_r_train
#   Rscript bench/r_train_bench.R C_BENCH [REPEATS] [STEPS_PER_ROUND]
#
# One thread on both sides. Each repeat runs the C program (its own 2 warm-up rounds, then 3
# timed ones) and then 3 timed R rounds, so load from other processes hits both alike; the ratio
# is of the medians over all rounds. The CPU time per step of each side is printed as well: on a
# loaded machine it is steadier than the wall clock.
library(hybridnet)

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1L) stop("usage: Rscript r_train_bench.R C_BENCH [REPEATS] [STEPS_PER_ROUND]")
c_bench <- args[[1L]]
repeats <- if (length(args) > 1L) as.integer(args[[2L]]) else 5L
steps <- if (length(args) > 2L) as.integer(args[[3L]]) else 100L
rounds <- 3L
batch <- 64L

hn_num_threads(1)
net <- hn_sequential(hn_dense(256, "relu", in_units = 512), hn_dense(128, "relu", in_units = 256),
                     hn_dense(2, in_units = 128))
hn_initialize(net, "xavier", seed = 42)
hn_hybridize(net)
loss_fn <- hn_loss("SoftmaxCrossEntropyLoss")
trainer <- hn_trainer(net, "sgd", list(learning_rate = 0.01))
# The C side's batch: x[i, j] = sin(0.1 * (512 * i + j)), held as R's (512, 64) column-major
# matrix, which is the (64, 512) row-major tensor with no transposition ("colmajor").
x <- matrix(sin(0.1 * (0:(batch * 512L - 1L))), nrow = 512L)
labels <- (0:(batch - 1L)) %% 2

train_step <- function() {
  data <- hn_tensor(x, layout = "colmajor")
  label <- hn_tensor(labels)
  out <- NULL
  loss <- hn_autograd_record({
    out <- hn_forward(net, data)
    hn_forward(loss_fn, list(out, label))
  })
  backward(loss)
  hn_trainer_step(trainer, batch)
  total <- hn_sum(loss)
  value <- as.array(total)
  for (t in list(total, loss, out, label, data)) hn_free(t)
  value
}

# Microseconds per step (wall clock) of each of `rounds` rounds; adds the CPU time to r_cpu_us.
r_cpu_us <- 0
time_rounds <- function() {
  vapply(seq_len(rounds), function(r) {
    cpu <- proc.time()
    start <- as.numeric(Sys.time())
    for (i in seq_len(steps)) train_step()
    wall <- (as.numeric(Sys.time()) - start) * 1e6 / steps
    used <- proc.time() - cpu
    r_cpu_us <<- r_cpu_us + (used[["user.self"]] + used[["sys.self"]]) * 1e6
    wall
  }, numeric(1))
}

# The C program's output lines; adds its CPU time (the whole process: setup, its 2 warm-up
# rounds and the timed ones) to c_cpu_us.
c_cpu_us <- 0
run_c <- function() {
  out <- NULL
  used <- system.time(out <- system2(c_bench, c(rounds, steps), stdout = TRUE, stderr = TRUE,
                                     env = "OMP_NUM_THREADS=1"))
  if (!is.null(attr(out, "status"))) stop(paste(c("the C benchmark failed:", out), collapse = "\n"))
  c_cpu_us <<- c_cpu_us + (used[["user.child"]] + used[["sys.child"]]) * 1e6
  out
}

for (i in seq_len(2L * steps)) train_step()            # warm-up, as the C side's 2 rounds
c_rounds <- r_rounds <- numeric()
c_lines <- character()
for (rep in seq_len(repeats)) {
  c_lines <- run_c()
  c_rounds <- c(c_rounds,
                as.numeric(sub("^round_us=", "", grep("^round_us=", c_lines, value = TRUE))))
  r_rounds <- c(r_rounds, time_rounds())
}
c_cpu_step <- c_cpu_us / (repeats * (rounds + 2L) * steps)
r_cpu_step <- r_cpu_us / (repeats * rounds * steps)

cat(sub("^cpu=", "CPU: ", grep("^cpu=", c_lines, value = TRUE)), "\n", sep = "")
cat(sub("^openblas=", "OpenBLAS: ", grep("^openblas=", c_lines, value = TRUE)), "\n", sep = "")
if (file.exists("/proc/loadavg")) cat("load average:", readLines("/proc/loadavg"), "\n")
cat(sprintf(paste("seed MLP 512-256-128-2 training step, batch 64, sgd, 1 thread; %d rounds of %d",
                  "steps per side, C and R alternating (R %s)\n"),
            length(r_rounds), steps, getRversion()))
c_median <- median(c_rounds)
r_median <- median(r_rounds)
cat(sprintf("  C API step:  median %9.1f us  min %9.1f us\n", c_median, min(c_rounds)))
cat(sprintf("  R step:      median %9.1f us  min %9.1f us\n", r_median, min(r_rounds)))
cat(sprintf("  CPU time per step: C %.1f us (setup and warm-up included), R %.1f us (ratio %.3f)\n",
            c_cpu_step, r_cpu_step, r_cpu_step / c_cpu_step))
ratio <- r_median / c_median
cat(sprintf("overhead ratio R / C (medians) %.3f (%+.1f us per step); target <= 1.15: %s\n", ratio,
            r_median - c_median, if (ratio <= 1.15) "met" else "MISSED"))
