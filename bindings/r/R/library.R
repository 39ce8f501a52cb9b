# Library-wide settings and facts.

hn_version <- function() {
  c(library = c_hn_version(), package = as.character(utils::packageVersion("hybridnet")),
    abi = as.character(c_hn_abi_version()))
}

hn_seed <- function(seed) {
  c_hn_seed(.hn_arg_number(seed, "seed", min = 0, max = 2^53))
  invisible(NULL)
}

hn_num_threads <- function(n = NULL) {
  old <- as.integer(c_hn_get_num_threads())
  if (!is.null(n)) c_hn_set_num_threads(.hn_arg_number(n, "n", min = 1, max = 1024))
  if (is.null(n)) old else invisible(old)
}

hn_live_handles <- function() {
  hnr_live_handles()
}
