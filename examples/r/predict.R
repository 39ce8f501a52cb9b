#!/usr/bin/env Rscript
# Runs an exported model (PREFIX-symbol.json + PREFIX-EEEE.params, MXNet 1.x format, written by
# hybridnet in any language or by MXNet) on .npy inputs and writes its outputs as .npy.
#
#   Rscript predict.R PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy
#
# The inputs feed the model's data inputs in order, each with the model's input shape (e.g.
# (batch, 512)); OUTPUT.npy holds the first output with the model's output shape (e.g.
# (batch, 2)), float32, and OUTPUT.K.npy output K of a model with several.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4L) {
  message("usage: Rscript predict.R PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy")
  quit(status = 2L)
}
suppressPackageStartupMessages(library(hybridnet))

status <- tryCatch({
  model <- hn_load(args[[1L]], epoch = as.integer(args[[2L]]))
  files <- strsplit(args[[3L]], ",", fixed = TRUE)[[1L]]
  xs <- lapply(files, function(file) {
    x <- hn_read_npy(file)
    if (is.null(dim(x))) dim(x) <- length(x)  # a 1-D file stays 1-D (a plain vector is one row)
    x
  })
  names(xs) <- hn_input_names(model)[seq_along(xs)]
  ys <- predict(model, if (length(xs) == 1L) xs[[1L]] else xs)
  if (!is.list(ys)) ys <- list(ys)
  shape <- function(a) paste0("(", paste(if (is.null(dim(a))) length(a) else dim(a), collapse = ", "), ")")
  for (k in seq_along(ys)) {
    path <- if (k == 1L) args[[4L]] else sub("\\.npy$", sprintf(".%d.npy", k - 1L), args[[4L]])
    hn_write_npy(ys[[k]], path)
    cat(sprintf("%s: output %s %s -> %s\n", basename(args[[1L]]), hn_output_names(model)[k],
                shape(ys[[k]]), path))
  }
  0L
}, hybridnet_error = function(e) {
  message(sprintf("predict.R: %s: %s", e$status, conditionMessage(e)))
  1L
})
quit(status = status)
