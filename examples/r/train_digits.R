#!/usr/bin/env Rscript
# Trains the LeNet-like network of examples/python/train_digits.py on the 8x8 digits from R,
# following the digits protocol every language's example follows (so their losses and
# parameters are bit-identical): the split and the initial parameters come from DATA_DIR,
# written by `python3 examples/python/train_digits.py --write-data DATA_DIR`.
#
#   Rscript train_digits.R DATA_DIR [--epochs N] [--steps N] [--optimizer adam|sgd]
#                          [--no-shuffle] [--out PREFIX] [--min-accuracy A]
#
# Prints "epoch E: loss L" per epoch and "test accuracy A" at the end. With --out PREFIX it
# writes PREFIX-losses.txt (each step's loss sum, float32 bits as 8 hex digits), PREFIX.params
# (the trained parameters) and the export PREFIX-symbol.json + PREFIX-0000.params.
usage <- paste("usage: Rscript train_digits.R DATA_DIR [--epochs N] [--steps N]",
               "[--optimizer adam|sgd] [--no-shuffle] [--out PREFIX] [--min-accuracy A]")

parse_args <- function(args) {
  if (length(args) < 1L || startsWith(args[[1L]], "--")) return(NULL)
  opts <- list(data = args[[1L]], epochs = 10L, steps = NA_integer_, optimizer = "adam",
               shuffle = TRUE, out = NULL, min_accuracy = 0)
  i <- 2L
  while (i <= length(args)) {
    flag <- args[[i]]
    if (flag == "--no-shuffle") {
      opts$shuffle <- FALSE
      i <- i + 1L
      next
    }
    if (i == length(args)) return(NULL)
    value <- args[[i + 1L]]
    number <- suppressWarnings(as.numeric(value))
    if (flag %in% c("--epochs", "--steps")) {
      if (is.na(number) || number < 1 || number != floor(number)) return(NULL)
      opts[[substring(flag, 3L)]] <- as.integer(number)
    } else if (flag == "--optimizer" && value %in% c("adam", "sgd")) {
      opts$optimizer <- value
    } else if (flag == "--out") {
      opts$out <- value
    } else if (flag == "--min-accuracy" && !is.na(number)) {
      opts$min_accuracy <- number
    } else {
      return(NULL)
    }
    i <- i + 2L
  }
  opts
}

opts <- parse_args(commandArgs(trailingOnly = TRUE))
if (is.null(opts)) {
  message(usage)
  quit(status = 2L)
}
suppressPackageStartupMessages(library(hybridnet))

lenet <- function() {
  hn_sequential(hn_conv2d(32, 3, padding = 1, activation = "relu"), hn_max_pool2d(2),
                hn_conv2d(64, 3, padding = 1, activation = "relu"), hn_max_pool2d(2),
                hn_flatten(), hn_dense(128, "relu"), hn_dense(10))
}

# A float32 value's bits as 8 lowercase hex digits.
float_hex <- function(v) paste(as.character(writeBin(v, raw(), size = 4L, endian = "big")),
                               collapse = "")

train <- function(opts) {
  split <- function(part, what) {
    hn_read_npy(file.path(opts$data, sprintf("digits_%s_%s.npy", part, what)), tensor = TRUE)
  }
  train_images <- split("train", "images")
  train_labels <- split("train", "labels")
  num_train <- hn_shape(train_images)[[1L]]

  net <- lenet()
  hn_initialize(net)
  hn_hybridize(net)
  hn_free(hn_forward(net, hn_tensor(array(0, c(1, 1, 8, 8)))))  # resolves the deferred shapes
  hn_load_parameters(net, file.path(opts$data, "lenet_init.params"))

  loss_fn <- hn_loss("SoftmaxCrossEntropyLoss")
  trainer <- if (opts$optimizer == "adam") {
    hn_trainer(net, "adam", list(learning_rate = 0.002))
  } else {
    hn_trainer(net, "sgd", list(learning_rate = 0.1, momentum = 0.9))
  }
  loader <- hn_data_loader(train_images, train_labels, batch_size = 32, shuffle = opts$shuffle,
                           last_batch = "keep", seed = 42)

  step_losses <- numeric(0)
  max_steps <- if (is.na(opts$steps)) Inf else opts$steps
  epoch <- 0L
  while (if (is.na(opts$steps)) epoch < opts$epochs else length(step_losses) < max_steps) {
    epoch <- epoch + 1L
    epoch_loss <- 0
    hn_reset(loader)
    while (length(step_losses) < max_steps && !is.null(batch <- hn_next_batch(loader))) {
      loss <- hn_autograd_record({
        out <- hn_forward(net, batch[[1L]])
        hn_forward(loss_fn, list(out, batch[[2L]]))
      })
      backward(loss)
      hn_trainer_step(trainer, hn_shape(batch[[1L]])[[1L]])
      total <- hn_sum(loss)
      step_losses[[length(step_losses) + 1L]] <- as.array(total)
      epoch_loss <- epoch_loss + step_losses[[length(step_losses)]]
      for (t in c(batch, out, loss, total)) hn_free(t)
    }
    cat(sprintf("epoch %d: loss %.6f\n", epoch, epoch_loss / num_train))
  }

  accuracy <- hn_metric("acc")
  test <- hn_data_loader(split("test", "images"), split("test", "labels"), batch_size = 100)
  while (!is.null(batch <- hn_next_batch(test))) {
    out <- hn_forward(net, batch[[1L]])
    hn_metric_update(accuracy, batch[[2L]], out)
    for (t in c(batch, out)) hn_free(t)
  }
  test_accuracy <- hn_metric_get(accuracy)[[1L]]
  cat(sprintf("test accuracy %.4f\n", test_accuracy))

  if (!is.null(opts$out)) {
    writeLines(vapply(step_losses, float_hex, character(1L)), paste0(opts$out, "-losses.txt"))
    hn_save_parameters(net, paste0(opts$out, ".params"))
    hn_export(net, opts$out, 0L)
  }
  if (test_accuracy < opts$min_accuracy) {
    cat(sprintf("FAIL: test accuracy %.4f is below %.4f\n", test_accuracy, opts$min_accuracy))
    return(1L)
  }
  0L
}

status <- tryCatch(train(opts), hybridnet_error = function(e) {
  message("train_digits.R: ", conditionMessage(e))
  1L
})
quit(status = status)
