# Loading exported models and running them: hn_load / mx.model.load, predict, hn_free.

setClass("HybridnetModel",
  representation(
    handle = "externalptr",   # hn_model (C finalizer: hn_model_free)
    state = "environment",    # $predictor (hn_predictor), $inputs_set (names set last call),
                              # $fast (predict()'s fast path)
    prefix = "character",
    epoch = "integer",
    inputs = "character",
    outputs = "character",
    layout = "character"      # predict()'s default: "rowmajor", "colmajor" from mx.model.load
  )
)

.hn_check_model <- function(model, arg = "model", call = sys.call(-1L)) {
  if (!is(model, "HybridnetModel")) {
    .hn_abort(sprintf("%s: '%s' must be a model from hn_load(), not %s", .hn_fn(call), arg,
                      .hn_describe(model)), call = call)
  }
  if (hnr_handle_state(model@handle, "hn_model") != 1L) {
    .hn_abort(sprintf("%s: the model is closed (%s)", .hn_fn(call),
                      "freed with hn_free(), or restored from a saved session"), call = call)
  }
  invisible(model)
}

.hn_new_model <- function(handle, prefix, epoch, layout = "rowmajor") {
  state <- new.env(parent = emptyenv())
  state$predictor <- NULL  # made at the first predict()
  state$inputs_set <- NULL
  state$fast <- NULL       # predict()'s fast path (hnr_fast_predictor), made at its first use
  new("HybridnetModel", handle = handle, state = state, prefix = prefix, epoch = epoch,
      inputs = c_hn_model_input_names(handle), outputs = c_hn_model_output_names(handle),
      layout = layout)
}

hn_load <- function(prefix, epoch = 0L) {
  prefix <- .hn_arg_string(prefix, "prefix")
  epoch <- .hn_arg_number(epoch, "epoch", min = 0, max = 9999)
  .hn_new_model(c_hn_model_load(path.expand(prefix), epoch), prefix, epoch)
}

# MXNet R's loader: the same model, whose predict() defaults to MXNet's layout (dimensions
# reversed, one example per column), so scripts written for MXNet run unchanged.
mx.model.load <- function(prefix, iteration) {
  model <- hn_load(prefix, iteration)
  model@layout <- "colmajor"
  model
}

hn_load_buffers <- function(symbol_json, params) {
  if (!(is.raw(symbol_json) || is.character(symbol_json) && length(symbol_json) == 1L &&
        !is.na(symbol_json))) {
    .hn_abort(sprintf("hn_load_buffers: 'symbol_json' must be one string or a raw vector, not %s",
                      .hn_describe(symbol_json)))
  }
  if (!is.raw(params)) {
    .hn_abort(sprintf(
      "hn_load_buffers: 'params' must be a raw vector (the bytes of a .params file), not %s",
      .hn_describe(params)))
  }
  .hn_new_model(c_hn_model_load_from_memory(symbol_json, params), NA_character_, NA_integer_)
}

predict.HybridnetModel <- function(object, x, ..., layout = NULL, array.layout = NULL) {
  state <- object@state
  if (is.null(layout)) layout <- if (is.null(array.layout)) object@layout else array.layout
  # The fast path: one plain numeric array for a one-input model goes to C in one .Call, which
  # converts it straight into the predictor's input tensor and the outputs straight into R
  # arrays (no S4 or SWIG dispatch, no copies in R).
  if (...length() == 0L && (is.double(x) || is.integer(x) || is.logical(x)) && !is.object(x) &&
      length(object@inputs) == 1L) {
    fast <- state$fast
    if (is.null(fast)) {
      .hn_check_model(object, "object")
      fast <- state$fast <- hnr_fast_predictor(object@handle)
    }
    return(.Call(R_swig_hnr_fast_predict, fast, x, layout, FALSE))
  }
  .hn_check_model(object, "object")
  extra <- list(...)
  if (length(extra) > 0L) {
    warning(sprintf("predict.HybridnetModel: ignored argument(s) %s",
                    paste(names(extra), collapse = ", ")), call. = FALSE)
  }
  layout <- .hn_arg_layout(layout)
  inputs <- .hn_named_inputs(x, object@inputs)
  # Inputs stay set in a predictor between forwards: start afresh when the set changes, so an
  # input left out this time is zeros (as documented) and not last call's value.
  if (is.null(state$predictor) || !identical(sort(names(inputs)), state$inputs_set)) {
    old <- state$predictor
    state$predictor <- c_hn_predictor_create(object@handle)
    state$inputs_set <- NULL
    c_hn_predictor_free(old)
  }
  pred <- state$predictor
  for (name in names(inputs)) {
    td <- .hn_to_tensor_data(inputs[[name]], layout, "x")
    c_hn_predictor_set_input(pred, name, 0L, td$shape, td$data)
  }
  state$inputs_set <- sort(names(inputs))
  c_hn_predictor_forward(pred)
  n <- c_hn_predictor_num_outputs(pred)
  outs <- lapply(seq_len(n) - 1L, function(i) {
    t <- c_hn_predictor_output(pred, i)
    on.exit(c_hn_tensor_free(t))
    .hn_tensor_to_r(t, layout)
  })
  if (n == 1L) outs[[1L]] else stats::setNames(outs, object@outputs)
}

setMethod("show", "HybridnetModel", function(object) {
  state <- hnr_handle_state(object@handle, "hn_model")
  src <- if (is.na(object@prefix)) "memory"
         else sprintf("%s (epoch %d)", object@prefix, object@epoch)
  cat(sprintf("<hybridnet model%s: %s>\n", if (state == 1L) "" else ", closed", src))
  cat("  inputs: ", paste(object@inputs, collapse = ", "), "\n", sep = "")
  cat("  outputs:", paste(object@outputs, collapse = ", "), "\n")
  cat("  layout: ", object@layout, "\n")
  invisible(object)
})

hn_input_names <- function(model) {
  .hn_check_model(model)
  model@inputs
}

hn_output_names <- function(model) {
  .hn_check_model(model)
  model@outputs
}

# ONNX export. Shapes are given in the model's layout (reversed for mx.model.load models, as
# predict() takes their arrays).
hn_export_onnx <- function(model, path, shapes, opset = 17L, dynamic_batch = FALSE) {
  .hn_check_model(model)
  path <- path.expand(.hn_arg_string(path, "path"))
  if (!is.list(shapes) || is.null(names(shapes))) {
    .hn_abort(sprintf("hn_export_onnx: 'shapes' must be a named list of input shapes, not %s",
                      .hn_describe(shapes)))
  }
  if (model@layout == "colmajor") shapes <- lapply(shapes, rev)
  opset <- .hn_arg_number(opset, "opset", min = 13, max = 21)
  flags <- .hn_arg_flag(dynamic_batch, "dynamic_batch")
  c_hn_model_export_onnx(model@handle, path, opset, flags, shapes, NULL)
  invisible(path)
}

# MXNet's mx.viz.print_summary table of the model's graph, as one string. Shapes are given in the
# model's layout (reversed for mx.model.load models, as predict() takes their arrays).
hn_summary <- function(model, shapes = NULL) {
  .hn_check_model(model)
  if (!is.null(shapes) && (!is.list(shapes) || is.null(names(shapes)))) {
    .hn_abort(sprintf("hn_summary: 'shapes' must be NULL or a named list of input shapes, not %s",
                      .hn_describe(shapes)))
  }
  if (!is.null(shapes) && model@layout == "colmajor") shapes <- lapply(shapes, rev)
  sym <- c_hn_model_symbol(model@handle)
  on.exit(c_hn_symbol_free(sym))
  c_hn_symbol_print_summary(sym, shapes, 0L, NULL)
}

hn_free <- function(x) {
  if (inherits(x, "HybridnetTensor")) {  # first: a training step frees several per step
    c_hn_tensor_free(x@handle)
  } else if (inherits(x, "HybridnetModel")) {
    state <- x@state
    c_hn_predictor_free(state$predictor)
    hnr_fast_release(state$fast)
    state$fast <- NULL
    c_hn_model_free(x@handle)
  } else if (inherits(x, "HybridnetBlock")) {
    c_hn_block_free(x@handle)
  } else if (inherits(x, "HybridnetTrainer")) {
    c_hn_trainer_free(x@handle)
  } else if (inherits(x, "HybridnetMetric")) {
    c_hn_metric_free(x@handle)
  } else if (inherits(x, "HybridnetDataLoader")) {
    c_hn_data_loader_free(x@handle)
  } else if (!is.null(x)) {
    .hn_abort(sprintf(paste("hn_free: 'x' must be a model, block, tensor, trainer, metric or",
                            "data loader, not %s"), .hn_describe(x)))
  }
  invisible(NULL)
}

hn_is_closed <- function(x) {
  if (inherits(x, "HybridnetModel")) return(hnr_handle_state(x@handle, "hn_model") != 1L)
  if (inherits(x, "HybridnetBlock")) return(hnr_handle_state(x@handle, "hn_block") != 1L)
  if (inherits(x, "HybridnetTensor")) return(hnr_handle_state(x@handle, "hn_tensor") != 1L)
  if (inherits(x, "HybridnetTrainer")) return(hnr_handle_state(x@handle, "hn_trainer") != 1L)
  if (inherits(x, "HybridnetMetric")) return(hnr_handle_state(x@handle, "hn_metric") != 1L)
  if (inherits(x, "HybridnetDataLoader")) return(hnr_handle_state(x@handle, "hn_data_loader") != 1L)
  .hn_abort(sprintf(paste("hn_is_closed: 'x' must be a model, block, tensor, trainer, metric or",
                          "data loader, not %s"), .hn_describe(x)))
}
