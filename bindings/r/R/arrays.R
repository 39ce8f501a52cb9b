# R arrays <-> row-major tensors.
#
# The model's shapes are C (row-major) shapes, e.g. (batch, features). R arrays are stored in
# column-major order. Two layouts are offered (see ?predict.HybridnetModel):
#   "rowmajor" (default): dim(x) equals the model's shape and x[i, j, ...] is element
#     [i-1, j-1, ...] of the tensor: a batch is a matrix with one example per row, as in
#     data frames and stats::predict. Costs one transposing copy each way (aperm).
#   "colmajor": dim(x) is the model's shape reversed (MXNet's R package): a batch of
#     examples is a matrix with one example per column. No transposition: R's column-major
#     memory is exactly the tensor's row-major memory.

.hn_layouts <- c("rowmajor", "colmajor")

.hn_arg_layout <- function(layout, call = sys.call(-1L)) {
  if (!is.character(layout) || length(layout) < 1L || is.na(layout[1L]) ||
      !(layout[1L] %in% .hn_layouts)) {
    .hn_abort(sprintf("%s: 'layout' must be \"rowmajor\" or \"colmajor\", not %s",
                      .hn_fn(call), .hn_describe(layout)), call = call)
  }
  layout[1L]
}

# list(shape, data) for a numeric array; data's column-major R memory holds the tensor's
# row-major elements (numeric, integer or logical; the glue converts to float32).
# A vector without dim is one example, shape (1, n), when `vector_is_row`, else shape (n).
.hn_to_tensor_data <- function(x, layout, arg, vector_is_row = TRUE, call = sys.call(-1L)) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!(is.numeric(x) || is.logical(x)) || is.object(x) && !is.matrix(x) && !is.array(x)) {
    .hn_abort_not_numeric(x, arg, call)
  }
  d <- dim(x)
  if (is.null(d)) {
    shape <- if (vector_is_row) c(1, length(x)) else length(x)
    data <- x
  } else if (layout == "rowmajor") {
    shape <- d
    data <- if (length(d) > 1L) aperm(x) else x
  } else {
    shape <- rev(d)
    data <- x
  }
  # The glue reads the elements only, so attributes stay (dropping them would copy `x`).
  list(shape = as.double(shape), data = data)
}

# An R value for row-major `values` of `shape`: a plain vector for rank 0 and 1, otherwise an
# array with dim = shape ("rowmajor") or rev(shape) ("colmajor").
.hn_from_tensor_data <- function(values, shape, layout) {
  if (length(shape) <= 1L) return(values)
  a <- array(values, dim = rev(shape))
  if (layout == "rowmajor") aperm(a) else a
}

.hn_abort_not_numeric <- function(x, arg, call) {
  .hn_abort(sprintf("%s: '%s' must be a numeric vector, matrix or array, not %s", .hn_fn(call),
                    arg, .hn_describe(x)), call = call)
}

# A new float32 tensor handle from an R array, converted (and for "rowmajor" transposed) in C in
# one pass, straight into the tensor: no aperm() copy, one .Call.
.hn_tensor_from_r <- function(x, layout, arg, vector_is_row = TRUE, call = sys.call(-1L)) {
  if (is.data.frame(x)) x <- as.matrix(x)
  t <- .Call(R_swig_hnr_tensor_from_r, x, layout == "colmajor", vector_is_row, FALSE)
  if (is.null(t)) .hn_abort_not_numeric(x, arg, call)
  t
}

# The R value of a tensor handle (the handle stays the caller's).
.hn_tensor_to_r <- function(t, layout) {
  .hn_from_tensor_data(hnr_tensor_values(t), c_hn_tensor_shape(t), layout)
}

# Inputs given as one array or a list of arrays, matched to `names` by name or position.
.hn_named_inputs <- function(x, names, call = sys.call(-1L)) {
  inputs <- if (is.list(x) && !is.data.frame(x)) x else list(x)
  if (length(inputs) == 0L) {
    .hn_abort(sprintf("%s: no input given", .hn_fn(call)), call = call)
  }
  given <- names(inputs)
  if (is.null(given) || all(given == "")) {
    if (length(inputs) > length(names)) {
      .hn_abort(sprintf("%s: %d inputs given, but the model has %d (%s)", .hn_fn(call),
                        length(inputs), length(names), paste(names, collapse = ", ")),
                category = "shape", call = call)
    }
    given <- names[seq_along(inputs)]
  } else if (any(given == "") || anyDuplicated(given)) {
    .hn_abort(sprintf("%s: name every input once (the model's inputs: %s)", .hn_fn(call),
                      paste(names, collapse = ", ")), call = call)
  }
  names(inputs) <- given
  inputs
}
