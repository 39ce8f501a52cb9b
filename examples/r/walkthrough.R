#!/usr/bin/env Rscript
# The seed tutorial ("Hybridize: faster and better") in R, as examples/cpp/seed_walkthrough.cc
# does it in C++: an MLP run eagerly and hybridized with the same output, 1000 forwards before
# and after, the symbolic program, and export -> load (here and in any other language) with the
# same output again.
#
#   Rscript walkthrough.R [--out DIR]     (the export goes to DIR, default: a temporary folder)
#
# (The tutorial's custom block that prints once needs a forward written in R; the C API takes
# C functions for that, so it is left to the C++ walkthrough.)
suppressPackageStartupMessages(library(hybridnet))
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args) == 2L && args[[1L]] == "--out") args[[2L]] else tempdir()
step <- function(title) cat("\n==", title, "\n")

hn_num_threads(1)
get_net <- function(seed) {
  net <- hn_sequential(hn_dense(256, "relu"), hn_dense(128, "relu"), hn_dense(2))
  hn_initialize(net, seed = seed)
}

step("1. HybridSequential MLP 512 -> 256 -> 128 -> 2, run eagerly")
set.seed(1)
x <- matrix(rnorm(512), nrow = 1)          # one example per row: the model's shape (1, 512)
net <- get_net(seed = 1)
eager <- hn_forward(net, x)
print(net)
print(eager)

step("2. After hn_hybridize(): the same output")
hn_hybridize(net)
hybrid <- hn_forward(net, x)
print(hybrid)
cat("identical to eager:", identical(eager, hybrid), "\n")

step("3. 1000 forwards before and after hybridizing")
bench <- function(net) system.time(for (i in 1:1000) hn_forward(net, x))[["elapsed"]]
bench_net <- get_net(seed = 2)
invisible(hn_forward(bench_net, x))  # shapes are inferred (and weights drawn) at the first forward
before <- bench(bench_net)
hn_hybridize(bench_net)
after <- bench(bench_net)
cat(sprintf("before hybridizing: %.4f sec\nafter hybridizing:  %.4f sec\nspeed-up: %.2fx\n",
            before, after, before / after))

step("4. The symbolic program (MXNet JSON)")
cat(substr(hn_to_json(net), 1, 400), "...\n")

step("5. Export, then load and predict (as C, C++, Java, Scala or MXNet would)")
prefix <- file.path(out_dir, "r_mlp")
files <- hn_export(net, prefix)
cat("wrote", files[["symbol"]], "and", files[["params"]], "\n")
model <- hn_load(prefix, 0)        # mx.model.load(prefix, 0): the same, in MXNet R's layout
print(model)
reloaded <- predict(model, x)
print(reloaded)
cat("loaded model identical:", identical(eager, reloaded), "\n")
cat("MXNet's layout (examples in columns) gives the transpose:",
    identical(predict(model, t(x), layout = "colmajor"), t(eager)), "\n")
imported <- hn_import(prefix, 0)
hn_hybridize(imported)
cat("imported + hybridized identical:", identical(eager, hn_forward(imported, x)), "\n")

hn_free(model)
ok <- identical(eager, hybrid) && identical(eager, reloaded)
if (!ok) quit(status = 1L)
