# Errors: R conditions of class c("hybridnet_error_<category>", "hybridnet_error", "error",
# "condition"), one category per C API status (hn_status). The native glue (src/glue.c) raises
# them for every failing C call with the library's message; the R layer raises the same
# classes for arguments it rejects itself.

# The C status of a category ("shape" -> HN_ERR_SHAPE -> -2), found through hn_status_name so
# the C enum stays the only list of categories.
.hn_status_code <- function(category) {
  status <- paste0("HN_ERR_", toupper(category))
  code <- -1L
  repeat {
    name <- c_hn_status_name(code)
    if (identical(name, status)) return(code)
    if (identical(name, "HN_ERR_UNKNOWN")) stop(sprintf("hybridnet: no status %s", status))
    code <- code - 1L
  }
}

.hn_condition <- function(message, category = "invalid_argument", call = NULL) {
  cond <- hnr_condition(.hn_status_code(category), message)
  cond["call"] <- list(call)
  cond
}

.hn_abort <- function(message, category = "invalid_argument", call = sys.call(-1L)) {
  stop(.hn_condition(message, category, call))
}

# ---- argument checks of the public functions -------------------------------------------------

.hn_fn <- function(call) {
  if (is.null(call)) "hybridnet" else deparse(call[[1L]], nlines = 1L)
}

.hn_arg_string <- function(x, arg, null_ok = FALSE, call = sys.call(-1L)) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.character(x) || length(x) != 1L || is.na(x)) {
    .hn_abort(sprintf("%s: '%s' must be one string, not %s", .hn_fn(call), arg, .hn_describe(x)),
              call = call)
  }
  x
}

.hn_arg_number <- function(x, arg, whole = TRUE, min = -Inf, max = Inf, call = sys.call(-1L)) {
  ok <- (is.numeric(x) || is.logical(x)) && length(x) == 1L && !is.na(x) && is.finite(x)
  if (ok && whole) ok <- x == floor(x)
  if (ok) ok <- x >= min && x <= max
  if (!ok) {
    what <- if (whole) "one whole number" else "one number"
    range <- if (is.finite(min) && is.finite(max)) sprintf(" in [%s, %s]", min, max)
             else if (is.finite(min)) sprintf(" >= %s", min) else ""
    .hn_abort(sprintf("%s: '%s' must be %s%s, not %s", .hn_fn(call), arg, what, range,
                      .hn_describe(x)), call = call)
  }
  if (whole) as.integer(x) else as.double(x)
}

.hn_arg_flag <- function(x, arg, call = sys.call(-1L)) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    .hn_abort(sprintf("%s: '%s' must be TRUE or FALSE, not %s", .hn_fn(call), arg,
                      .hn_describe(x)), call = call)
  }
  as.integer(x)
}

.hn_describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (isS4(x)) return(sprintf("an object of class %s", class(x)[1L]))
  if (is.atomic(x)) {
    if (length(x) == 1L) return(sprintf("%s %s", typeof(x), format(x)))
    return(sprintf("a %s vector of length %d", typeof(x), length(x)))
  }
  sprintf("an object of class %s", paste(class(x), collapse = "/"))
}
