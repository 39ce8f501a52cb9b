#!/usr/bin/env Rscript
# Runs an exported model (PREFIX-symbol.json + PREFIX-EEEE.params, MXNet 1.x format, written by
# hybridnet in any language or by MXNet) on a .npy input and writes the first output as .npy.
#
#   Rscript predict.R PREFIX EPOCH INPUT.npy OUTPUT.npy
#
# The input's shape is the model's input shape (e.g. (batch, 512)); the output file holds the
# first output with the model's output shape (e.g. (batch, 2)), float32.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4L) {
  message("usage: Rscript predict.R PREFIX EPOCH INPUT.npy OUTPUT.npy")
  quit(status = 2L)
}
suppressPackageStartupMessages(library(hybridnet))

status <- tryCatch({
  model <- hn_load(args[[1L]], epoch = as.integer(args[[2L]]))
  x <- hn_read_npy(args[[3L]])
  if (is.null(dim(x))) dim(x) <- length(x)  # a 1-D file stays 1-D (a plain vector is one row)
  y <- predict(model, x)
  if (is.list(y)) y <- y[[1L]]                # several outputs: the first, as the C example
  hn_write_npy(y, args[[4L]])
  shape <- function(a) paste0("(", paste(if (is.null(dim(a))) length(a) else dim(a), collapse = ", "), ")")
  cat(sprintf("%s: input %s %s -> output %s %s\n", basename(args[[1L]]), hn_input_names(model)[1L],
              shape(x), hn_output_names(model)[1L], shape(y)))
  0L
}, hybridnet_error = function(e) {
  message(sprintf("predict.R: %s: %s", e$status, conditionMessage(e)))
  1L
})
quit(status = status)
