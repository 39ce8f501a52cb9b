# Building models (Gluon blocks): hn_sequential, hn_dense, ..., hn_initialize, hn_forward,
# hn_hybridize, hn_export, hn_import.

# handle: hn_block (C finalizer: hn_block_free); tree: an environment shared by the copies of
# this object, $parent = the parent's tree (or NULL), so hn_add can refuse cycles, which the C
# API does not detect (a block inside its own child recurses without end when printed or run).
setClass("HybridnetBlock", representation(handle = "externalptr", tree = "environment"))

.hn_new_block <- function(handle) {
  tree <- new.env(parent = emptyenv())
  tree$parent <- NULL
  new("HybridnetBlock", handle = handle, tree = tree)
}

.hn_check_block <- function(block, arg = "block", call = sys.call(-1L)) {
  if (!inherits(block, "HybridnetBlock")) {
    .hn_abort(sprintf("%s: '%s' must be a block (hn_sequential(), hn_dense(), ...), not %s",
                      .hn_fn(call), arg, .hn_describe(block)), call = call)
  }
  if (hnr_handle_state(block@handle, "hn_block") != 1L) {
    .hn_abort(sprintf("%s: '%s' is closed (freed with hn_free(), or restored from a saved session)",
                      .hn_fn(call), arg), call = call)
  }
  invisible(block)
}

# Attribute text as MXNet writes it: True/False, numbers, "(a, b)" tuples.
.hn_attr_text <- function(v) {
  if (is.logical(v)) return(if (v) "True" else "False")
  if (is.numeric(v)) {
    s <- format(v, scientific = FALSE, trim = TRUE, digits = 15)
    return(if (length(v) == 1L) s else paste0("(", paste(s, collapse = ", "), ")"))
  }
  as.character(v)
}

.hn_create_block <- function(kind, attrs, call = sys.call(-1L)) {
  attrs <- attrs[!vapply(attrs, is.null, logical(1L))]
  for (key in names(attrs)) {
    v <- attrs[[key]]
    if (!(is.character(v) || is.numeric(v) || is.logical(v)) || length(v) == 0L || anyNA(v) ||
        !is.numeric(v) && length(v) != 1L) {
      .hn_abort(sprintf("%s: '%s' must be one value, not %s", .hn_fn(call), key, .hn_describe(v)),
                call = call)
    }
  }
  text <- vapply(attrs, .hn_attr_text, character(1L))
  .hn_new_block(c_hn_block_create(kind, if (length(text)) text else NULL))
}

hn_sequential <- function(..., hybrid = TRUE, prefix = NULL) {
  .hn_arg_flag(hybrid, "hybrid")
  block <- .hn_create_block(if (hybrid) "HybridSequential" else "Sequential",
                            list(prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
  hn_add(block, ...)
}

hn_add <- function(block, ...) {
  .hn_check_block(block)
  children <- list(...)
  for (i in seq_along(children)) {
    child <- children[[i]]
    .hn_check_block(child, sprintf("..%d", i))
    for (up in .hn_ancestors(block)) {
      if (identical(up, child@tree)) {
        .hn_abort(paste("hn_add: a block cannot be added inside itself",
                        "(it is the container or one of its parents)"))
      }
    }
    c_hn_block_add(block@handle, child@handle)
    child@tree$parent <- block@tree
  }
  invisible(block)
}

# The trees of `block` and of every container above it.
.hn_ancestors <- function(block) {
  out <- list()
  tree <- block@tree
  while (!is.null(tree)) {
    out[[length(out) + 1L]] <- tree
    tree <- tree$parent
  }
  out
}

hn_dense <- function(units, activation = NULL, use_bias = TRUE, flatten = TRUE, in_units = 0,
                     weight_initializer = NULL, bias_initializer = NULL, prefix = NULL) {
  .hn_create_block("Dense", list(
    units = .hn_arg_number(units, "units", min = 1),
    activation = .hn_arg_string(activation, "activation", null_ok = TRUE),
    use_bias = as.logical(.hn_arg_flag(use_bias, "use_bias")),
    flatten = as.logical(.hn_arg_flag(flatten, "flatten")),
    in_units = .hn_arg_number(in_units, "in_units", min = 0),
    weight_initializer = .hn_arg_string(weight_initializer, "weight_initializer", null_ok = TRUE),
    bias_initializer = .hn_arg_string(bias_initializer, "bias_initializer", null_ok = TRUE),
    prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

hn_activation <- function(activation, prefix = NULL) {
  .hn_create_block("Activation", list(
    activation = .hn_arg_string(activation, "activation"),
    prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

hn_dropout <- function(rate, prefix = NULL) {
  .hn_create_block("Dropout", list(
    rate = .hn_arg_number(rate, "rate", whole = FALSE, min = 0, max = 1),
    prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

hn_flatten <- function(prefix = NULL) {
  .hn_create_block("Flatten", list(prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

hn_conv2d <- function(channels, kernel_size, strides = 1, padding = 0, activation = NULL,
                      use_bias = TRUE, in_channels = 0, prefix = NULL) {
  .hn_create_block("Conv2D", list(
    channels = .hn_arg_number(channels, "channels", min = 1),
    kernel_size = .hn_arg_size(kernel_size, "kernel_size", min = 1),
    strides = .hn_arg_size(strides, "strides", min = 1),
    padding = .hn_arg_size(padding, "padding", min = 0),
    activation = .hn_arg_string(activation, "activation", null_ok = TRUE),
    use_bias = as.logical(.hn_arg_flag(use_bias, "use_bias")),
    in_channels = .hn_arg_number(in_channels, "in_channels", min = 0),
    prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

hn_max_pool2d <- function(pool_size = 2, strides = NULL, padding = 0, prefix = NULL) {
  .hn_create_block("MaxPool2D", list(
    pool_size = .hn_arg_size(pool_size, "pool_size", min = 1),
    strides = if (!is.null(strides)) .hn_arg_size(strides, "strides", min = 1),
    padding = .hn_arg_size(padding, "padding", min = 0),
    prefix = .hn_arg_string(prefix, "prefix", null_ok = TRUE)))
}

# A window size: one whole number or two (height, width), each >= min.
.hn_arg_size <- function(x, arg, min, call = sys.call(-1L)) {
  if (!is.numeric(x) || !(length(x) %in% 1:2) || anyNA(x) || any(!is.finite(x)) ||
      any(x != floor(x)) || any(x < min)) {
    .hn_abort(sprintf("%s: '%s' must be one or two whole numbers >= %s, not %s", .hn_fn(call),
                      arg, min, .hn_describe(x)), call = call)
  }
  as.integer(x)
}

hn_initialize <- function(block, initializer = "uniform", seed = 0, force_reinit = FALSE) {
  .hn_check_block(block)
  c_hn_block_initialize(block@handle, .hn_arg_string(initializer, "initializer"),
                        .hn_arg_number(seed, "seed", min = 0, max = 2^53),
                        .hn_arg_flag(force_reinit, "force_reinit"))
  invisible(block)
}

hn_forward <- function(block, x, layout = c("rowmajor", "colmajor")) {
  # Tensors in, tensors out (training: the outputs stay in the library, on the autograd tape).
  # A training step's path, one .Call: the glue checks each handle (its kind, not closed) and
  # makes the output tensors; it returns NULL when `x` is not all tensors.
  if (inherits(block, "HybridnetBlock")) {
    outs <- .Call(R_swig_hnr_forward_tensors, block@handle, x, .hn_tensor_prototype, FALSE)
    if (!is.null(outs)) return(outs)
  }
  .hn_check_block(block)
  inputs <- if (is.list(x) && !is.data.frame(x)) x else list(x)
  layout <- .hn_arg_layout(layout)
  tensors <- list()
  on.exit(for (t in tensors) c_hn_tensor_free(t))
  for (i in seq_along(inputs)) {
    tensors[[i]] <- .hn_tensor_from_r(inputs[[i]], layout, "x")
  }
  outs <- c_hn_block_forward(block@handle, tensors)
  on.exit(for (t in outs) c_hn_tensor_free(t), add = TRUE)
  values <- lapply(outs, .hn_tensor_to_r, layout = layout)
  if (length(values) == 1L) values[[1L]] else values
}

predict.HybridnetBlock <- function(object, x, ..., layout = c("rowmajor", "colmajor")) {
  hn_forward(object, x, layout = layout)
}

hn_hybridize <- function(block, active = TRUE, static_alloc = FALSE, static_shape = FALSE) {
  .hn_check_block(block)
  c_hn_block_hybridize(block@handle, .hn_arg_flag(active, "active"),
                       .hn_arg_flag(static_alloc, "static_alloc"),
                       .hn_arg_flag(static_shape, "static_shape"))
  invisible(block)
}

hn_export <- function(block, prefix, epoch = 0L) {
  .hn_check_block(block)
  prefix <- .hn_arg_string(prefix, "prefix")
  epoch <- .hn_arg_number(epoch, "epoch", min = 0, max = 9999)
  c_hn_block_export(block@handle, path.expand(prefix), epoch)
  invisible(c(symbol = paste0(prefix, "-symbol.json"),
              params = sprintf("%s-%04d.params", prefix, epoch)))
}

hn_import <- function(prefix, epoch = 0L, input_names = "data") {
  prefix <- path.expand(.hn_arg_string(prefix, "prefix"))
  epoch <- .hn_arg_number(epoch, "epoch", min = 0, max = 9999)
  if (!is.character(input_names) || length(input_names) == 0L || anyNA(input_names)) {
    .hn_abort(sprintf("hn_import: 'input_names' must be a character vector, not %s",
                      .hn_describe(input_names)))
  }
  .hn_new_block(c_hn_block_import(paste0(prefix, "-symbol.json"), input_names,
                                  sprintf("%s-%04d.params", prefix, epoch)))
}

hn_save_parameters <- function(block, path) {
  .hn_check_block(block)
  c_hn_block_save_parameters(block@handle, path.expand(.hn_arg_string(path, "path")))
  invisible(block)
}

hn_load_parameters <- function(block, path, allow_missing = FALSE, ignore_extra = FALSE) {
  .hn_check_block(block)
  c_hn_block_load_parameters(block@handle, path.expand(.hn_arg_string(path, "path")),
                             .hn_arg_flag(allow_missing, "allow_missing"),
                             .hn_arg_flag(ignore_extra, "ignore_extra"))
  invisible(block)
}

hn_to_json <- function(block) {
  .hn_check_block(block)
  sym <- c_hn_block_trace(block@handle, 1)
  on.exit(c_hn_symbol_free(sym))
  c_hn_symbol_to_json(sym)
}

hn_parameters <- function(block) {
  .hn_check_block(block)
  list_handle <- c_hn_block_collect_params(block@handle)
  on.exit(c_hn_tensor_list_free(list_handle))
  n <- c_hn_tensor_list_size(list_handle)
  params <- list()
  for (i in seq_len(n) - 1L) {
    t <- c_hn_tensor_list_get(list_handle, i)
    if (is.null(t)) next
    params[[c_hn_tensor_list_name(list_handle, i)]] <- .hn_tensor_to_r(t, "rowmajor")
    c_hn_tensor_free(t)
  }
  params
}

setMethod("show", "HybridnetBlock", function(object) {
  if (hnr_handle_state(object@handle, "hn_block") != 1L) {
    cat("<hybridnet block, closed>\n")
  } else {
    cat(c_hn_block_to_string(object@handle), "\n", sep = "")
  }
  invisible(object)
})
