# The profiler (MXNet's mx.profiler; hn_profiler_* of the C API): switches, the trace file and the
# aggregate table.

hn_profiler_config <- function(...) {
  options <- .hn_kwargs(list(...), "...")
  c_hn_profiler_set_config(options)
  invisible(NULL)
}

hn_profiler_state <- function(state = NULL) {
  if (!is.null(state)) {
    c_hn_profiler_set_state(.hn_arg_string(state, "state"))
    return(invisible(state))
  }
  c_hn_profiler_state()
}

hn_profiler_pause <- function() {
  c_hn_profiler_pause()
  invisible(NULL)
}

hn_profiler_resume <- function() {
  c_hn_profiler_resume()
  invisible(NULL)
}

hn_profiler_dump <- function(finished = TRUE) {
  c_hn_profiler_dump(.hn_arg_flag(finished, "finished"))
  invisible(NULL)
}

hn_profiler_dumps <- function(reset = FALSE, format = "table", sort_by = "total",
                              ascending = FALSE) {
  c_hn_profiler_dumps(.hn_arg_flag(reset, "reset"), .hn_arg_string(format, "format"),
                      .hn_arg_string(sort_by, "sort_by"), .hn_arg_flag(ascending, "ascending"))
}
