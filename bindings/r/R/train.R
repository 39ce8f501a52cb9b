# Training: tensors, autograd, block parameters, trainers, losses, metrics and data loaders over
# the C API's hn_autograd_*, hn_block_param_*, hn_trainer_*, hn_metric_* and hn_data_loader_*.
#
# Training keeps its values in the library: a HybridnetTensor is a handle on a tensor (row-major,
# float32 when made from R), so a step moves no data through R but the batch and the loss.
# R arrays and tensors convert as hn_forward converts them (layout "rowmajor": dim(x) is the
# tensor's shape; "colmajor": dim(x) is the shape reversed, no copy).

setClass("HybridnetTensor", representation(handle = "externalptr"))
setClass("HybridnetTrainer", representation(handle = "externalptr", block = "HybridnetBlock"))
setClass("HybridnetMetric", representation(handle = "externalptr"))
setClass("HybridnetDataLoader", representation(handle = "externalptr", arrays = "list"))

# Tensors are made several times per training step: from a prototype, setting the slot as an
# attribute, which skips new()'s initialize and validity checks (the handle is the glue's).
.hn_tensor_prototype <- new("HybridnetTensor")
.hn_new_tensor <- function(handle) {
  t <- .hn_tensor_prototype
  attr(t, "handle") <- handle
  t
}

.hn_is_tensor <- function(x) inherits(x, "HybridnetTensor")

# Checks that `x` is a live object of `class` (its handle of C kind `kind`); `what` names it.
.hn_check_handle <- function(x, class, kind, what, arg, call = sys.call(-1L)) {
  if (!inherits(x, class)) {
    .hn_abort(sprintf("%s: '%s' must be %s, not %s", .hn_fn(call), arg, what, .hn_describe(x)),
              call = call)
  }
  if (hnr_handle_state(x@handle, kind) != 1L) {
    .hn_abort(sprintf("%s: '%s' is closed (freed with hn_free(), or restored from a saved session)",
                      .hn_fn(call), arg), call = call)
  }
  invisible(x)
}

.hn_check_tensor <- function(x, arg = "x", call = sys.call(-1L)) {
  .hn_check_handle(x, "HybridnetTensor", "hn_tensor", "a tensor (hn_tensor())", arg, call)
}

# ---- tensors -------------------------------------------------------------------------------

hn_tensor <- function(x, layout = c("rowmajor", "colmajor")) {
  if (.hn_is_tensor(x)) return(x)
  # Evaluated here, not as promises inside the helpers, so that errors name hn_tensor.
  layout <- .hn_arg_layout(layout)
  handle <- .hn_tensor_from_r(x, layout, "x", vector_is_row = FALSE)
  .hn_new_tensor(handle)
}

as.array.HybridnetTensor <- function(x, layout = c("rowmajor", "colmajor"), ...) {
  .hn_check_tensor(x)
  .hn_tensor_to_r(x@handle, .hn_arg_layout(layout))
}

hn_shape <- function(x) {
  .hn_check_tensor(x)
  c_hn_tensor_shape(x@handle)
}

hn_sum <- function(x) {
  .hn_check_tensor(x)
  .hn_new_tensor(c_hn_op_invoke("sum", x@handle, NULL)[[1L]])
}

hn_detach <- function(x) {
  .hn_check_tensor(x)
  .hn_new_tensor(c_hn_tensor_detach(x@handle))
}

setMethod("show", "HybridnetTensor", function(object) {
  if (hnr_handle_state(object@handle, "hn_tensor") != 1L) {
    cat("<hybridnet tensor, closed>\n")
  } else {
    shape <- paste(c_hn_tensor_shape(object@handle), collapse = ", ")
    cat(sprintf("<hybridnet tensor (%s)>\n", shape))
  }
  invisible(object)
})

# ---- autograd ------------------------------------------------------------------------------

# The C enum hn_grad_req by MXNet's names.
.hn_grad_reqs <- c(null = 0L, write = 1L, add = 3L)

.hn_arg_grad_req <- function(grad_req, call = sys.call(-1L)) {
  if (!is.character(grad_req) || length(grad_req) != 1L || is.na(grad_req) ||
      !(grad_req %in% names(.hn_grad_reqs))) {
    .hn_abort(sprintf("%s: 'grad_req' must be \"write\", \"add\" or \"null\", not %s",
                      .hn_fn(call), .hn_describe(grad_req)), call = call)
  }
  grad_req
}

# MXNet's autograd.record() and pause() scopes: the glue evaluates the promise `expr` of this
# frame with recording and training set as given and restores both afterwards, also on error
# (one .Call, no on.exit).
hn_autograd_record <- function(expr, train_mode = TRUE) {
  .Call(R_swig_hnr_autograd_scope, environment(), 1L, .hn_arg_flag(train_mode, "train_mode"),
        FALSE)
}

hn_autograd_pause <- function(expr, train_mode = FALSE) {
  .Call(R_swig_hnr_autograd_scope, environment(), 0L, .hn_arg_flag(train_mode, "train_mode"),
        FALSE)
}

hn_is_recording <- function() as.logical(c_hn_autograd_is_recording())

hn_is_training <- function() as.logical(c_hn_autograd_is_training())

hn_attach_grad <- function(x, grad_req = "write") {
  .hn_check_tensor(x)
  c_hn_autograd_mark_variables(x@handle, .hn_grad_reqs[[.hn_arg_grad_req(grad_req)]])
  invisible(x)
}

backward <- function(x, ...) UseMethod("backward")

backward.HybridnetTensor <- function(x, retain_graph = FALSE, train_mode = TRUE, ...) {
  .hn_check_tensor(x)
  c_hn_autograd_backward(x@handle, NULL, .hn_arg_flag(retain_graph, "retain_graph"),
                         .hn_arg_flag(train_mode, "train_mode"))
  invisible(NULL)
}

grad <- function(x, ...) UseMethod("grad")

grad.HybridnetTensor <- function(x, ...) {
  .hn_check_tensor(x)
  g <- c_hn_tensor_grad(x@handle)
  if (is.null(g)) {
    .hn_abort("grad: 'x' has no gradient: call hn_attach_grad(x) before recording")
  }
  .hn_new_tensor(g)
}

# ---- block parameters ------------------------------------------------------------------------

hn_param_names <- function(block) {
  .hn_check_block(block)
  n <- c_hn_block_param_count(block@handle)
  vapply(seq_len(n) - 1L, function(i) c_hn_block_param_info(block@handle, i)$name, character(1L))
}

hn_param_grad <- function(block, name) {
  .hn_check_block(block)
  .hn_new_tensor(c_hn_block_param_grad(block@handle, .hn_arg_string(name, "name")))
}

.hn_param_attr_keys <- c("grad_req", "lr_mult", "wd_mult")

.hn_arg_param_key <- function(key, call = sys.call(-1L)) {
  if (!is.character(key) || length(key) != 1L || is.na(key) || !(key %in% .hn_param_attr_keys)) {
    .hn_abort(sprintf("%s: 'key' must be one of %s, not %s", .hn_fn(call),
                      paste(.hn_param_attr_keys, collapse = ", "), .hn_describe(key)),
              call = call)
  }
  key
}

hn_param_attr <- function(block, name, key) {
  .hn_check_block(block)
  value <- c_hn_block_param_get_attr(block@handle, .hn_arg_string(name, "name"),
                                     .hn_arg_param_key(key))
  if (key == "grad_req") value else as.double(value)
}

hn_set_param_attr <- function(block, key, value, name = NULL) {
  .hn_check_block(block)
  key <- .hn_arg_param_key(key)
  value <- if (key == "grad_req") .hn_arg_grad_req(value)
           else .hn_attr_text(.hn_arg_number(value, "value", whole = FALSE))
  c_hn_block_param_set_attr(block@handle, .hn_arg_string(name, "name", null_ok = TRUE), key,
                            value)
  invisible(block)
}

hn_zero_grad <- function(block, name = NULL) {
  .hn_check_block(block)
  c_hn_block_param_zero_grad(block@handle, .hn_arg_string(name, "name", null_ok = TRUE))
  invisible(block)
}

# ---- losses ----------------------------------------------------------------------------------

hn_loss <- function(kind, ...) {
  kind <- .hn_arg_string(kind, "kind")
  # The C API's block kinds are the one list of losses; a kind not named "...Loss" is a layer.
  if (!grepl("Loss$", kind)) {
    .hn_abort(sprintf(paste("hn_loss: 'kind' must name a loss block kind",
                            "(\"SoftmaxCrossEntropyLoss\", \"L2Loss\", ...), not \"%s\""), kind),
              category = "not_found")
  }
  .hn_create_block(kind, list(...))
}

# ---- trainers --------------------------------------------------------------------------------

.hn_check_trainer <- function(trainer, arg = "trainer", call = sys.call(-1L)) {
  .hn_check_handle(trainer, "HybridnetTrainer", "hn_trainer", "a trainer (hn_trainer())", arg,
                   call)
}

# Keyword arguments as MXNet's text ("0.9", "True", "(1, 2)"), for optimizers and metrics.
.hn_kwargs <- function(params, arg, call = sys.call(-1L)) {
  if (!is.list(params) || length(params) > 0L &&
      (is.null(names(params)) || any(names(params) == ""))) {
    .hn_abort(sprintf("%s: '%s' must be a named list, not %s", .hn_fn(call), arg,
                      .hn_describe(params)), call = call)
  }
  if (length(params) == 0L) return(NULL)
  for (key in names(params)) {
    v <- params[[key]]
    if (!(is.character(v) || is.numeric(v) || is.logical(v)) || length(v) == 0L || anyNA(v) ||
        !is.numeric(v) && length(v) != 1L) {
      .hn_abort(sprintf("%s: %s$%s must be one value, not %s", .hn_fn(call), arg, key,
                        .hn_describe(v)), call = call)
    }
  }
  vapply(params, .hn_attr_text, character(1L))
}

hn_trainer <- function(block, optimizer, params = list()) {
  .hn_check_block(block)
  optimizer <- .hn_arg_string(optimizer, "optimizer")
  opt <- c_hn_optimizer_create(optimizer, .hn_kwargs(params, "params"))
  on.exit(c_hn_optimizer_free(opt))  # the trainer shares it
  names <- hn_param_names(block)
  owners <- rep(list(block@handle), length(names))
  names(owners) <- names
  new("HybridnetTrainer", handle = c_hn_trainer_create(owners, opt), block = block)
}

hn_trainer_step <- function(trainer, batch_size, ignore_stale_grad = FALSE) {
  .hn_check_trainer(trainer)
  c_hn_trainer_step(trainer@handle, .hn_arg_number(batch_size, "batch_size", min = 1),
                    .hn_arg_flag(ignore_stale_grad, "ignore_stale_grad"))
  invisible(trainer)
}

hn_learning_rate <- function(trainer) {
  .hn_check_trainer(trainer)
  c_hn_trainer_get_learning_rate(trainer@handle)
}

hn_set_learning_rate <- function(trainer, lr) {
  .hn_check_trainer(trainer)
  c_hn_trainer_set_learning_rate(trainer@handle, .hn_arg_number(lr, "lr", whole = FALSE, min = 0))
  invisible(trainer)
}

hn_save_states <- function(trainer, path) {
  .hn_check_trainer(trainer)
  c_hn_trainer_save_states(trainer@handle, path.expand(.hn_arg_string(path, "path")))
  invisible(path)
}

hn_load_states <- function(trainer, path) {
  .hn_check_trainer(trainer)
  c_hn_trainer_load_states(trainer@handle, path.expand(.hn_arg_string(path, "path")))
  invisible(trainer)
}

setMethod("show", "HybridnetTrainer", function(object) {
  state <- if (hnr_handle_state(object@handle, "hn_trainer") == 1L) "" else ", closed"
  cat(sprintf("<hybridnet trainer%s>\n", state))
  invisible(object)
})

# ---- metrics ---------------------------------------------------------------------------------

.hn_check_metric <- function(metric, arg = "metric", call = sys.call(-1L)) {
  .hn_check_handle(metric, "HybridnetMetric", "hn_metric", "a metric (hn_metric())", arg, call)
}

hn_metric <- function(name, ...) {
  name <- .hn_arg_string(name, "name")
  new("HybridnetMetric", handle = c_hn_metric_create(name, .hn_kwargs(list(...), "...")))
}

# Tensors of one argument of hn_metric_update (a tensor, an R array, or a list of them); R arrays
# become tensors that `made` (an environment) remembers so the caller frees them.
.hn_tensor_args <- function(x, arg, made, call = sys.call(-1L)) {
  items <- if (is.list(x) && !is.data.frame(x)) x else list(x)
  lapply(items, function(item) {
    if (.hn_is_tensor(item)) return(.hn_check_tensor(item, arg, call)@handle)
    t <- .hn_tensor_from_r(item, "rowmajor", arg, vector_is_row = FALSE, call = call)
    made$tensors <- c(made$tensors, list(t))
    t
  })
}

hn_metric_update <- function(metric, labels, preds) {
  .hn_check_metric(metric)
  made <- new.env(parent = emptyenv())
  on.exit(for (t in made$tensors) c_hn_tensor_free(t))
  c_hn_metric_update(metric@handle, .hn_tensor_args(labels, "labels", made),
                     .hn_tensor_args(preds, "preds", made))
  invisible(metric)
}

hn_metric_get <- function(metric, global = FALSE) {
  .hn_check_metric(metric)
  c_hn_metric_get(metric@handle, .hn_arg_flag(global, "global"))
}

hn_metric_reset <- function(metric, local_only = FALSE) {
  .hn_check_metric(metric)
  c_hn_metric_reset(metric@handle, .hn_arg_flag(local_only, "local_only"))
  invisible(metric)
}

setMethod("show", "HybridnetMetric", function(object) {
  if (hnr_handle_state(object@handle, "hn_metric") != 1L) {
    cat("<hybridnet metric, closed>\n")
  } else {
    v <- c_hn_metric_get(object@handle, 0L)
    cat(sprintf("<hybridnet metric: %s>\n", paste(names(v), format(v), sep = " = ",
                                                   collapse = ", ")))
  }
  invisible(object)
})

# ---- data loaders ----------------------------------------------------------------------------

.hn_check_loader <- function(loader, arg = "loader", call = sys.call(-1L)) {
  .hn_check_handle(loader, "HybridnetDataLoader", "hn_data_loader",
                   "a data loader (hn_data_loader())", arg, call)
}

hn_data_loader <- function(..., batch_size, shuffle = FALSE, last_batch = "keep", seed = 0,
                           layout = c("rowmajor", "colmajor")) {
  layout <- .hn_arg_layout(layout)
  arrays <- list(...)
  if (length(arrays) == 0L) .hn_abort("hn_data_loader: give at least one array")
  tensors <- lapply(seq_along(arrays), function(i) {
    if (.hn_is_tensor(arrays[[i]])) return(.hn_check_tensor(arrays[[i]], sprintf("..%d", i)))
    .hn_new_tensor(.hn_tensor_from_r(arrays[[i]], layout, sprintf("..%d", i),
                                     vector_is_row = FALSE))
  })
  handle <- c_hn_data_loader_create(lapply(tensors, function(t) t@handle),
                                    .hn_arg_number(batch_size, "batch_size", min = 1, max = 2^53),
                                    .hn_arg_flag(shuffle, "shuffle"),
                                    .hn_arg_string(last_batch, "last_batch"),
                                    .hn_arg_number(seed, "seed", min = 0, max = 2^53))
  new("HybridnetDataLoader", handle = handle, arrays = tensors)
}

hn_next_batch <- function(loader) {
  .hn_check_loader(loader)
  batch <- c_hn_data_loader_next(loader@handle)
  if (length(batch) == 0L) return(NULL)
  lapply(batch, .hn_new_tensor)
}

hn_reset <- function(loader) {
  .hn_check_loader(loader)
  c_hn_data_loader_reset(loader@handle)
  invisible(loader)
}

hn_num_batches <- function(loader) {
  .hn_check_loader(loader)
  c_hn_data_loader_num_batches(loader@handle)
}

setMethod("show", "HybridnetDataLoader", function(object) {
  if (hnr_handle_state(object@handle, "hn_data_loader") != 1L) {
    cat("<hybridnet data loader, closed>\n")
  } else {
    cat(sprintf("<hybridnet data loader, %d batches>\n",
                as.integer(c_hn_data_loader_num_batches(object@handle))))
  }
  invisible(object)
})
