# .npy files through the C API's reader and writer (numpy format 1.0-3.0, little-endian, C order).

hn_read_npy <- function(path, layout = c("rowmajor", "colmajor"), tensor = FALSE) {
  path <- path.expand(.hn_arg_string(path, "path"))
  layout <- .hn_arg_layout(layout)
  if (.hn_arg_flag(tensor, "tensor")) return(.hn_new_tensor(c_hn_tensor_load_npy(path)))
  t <- c_hn_tensor_load_npy(path)
  on.exit(c_hn_tensor_free(t))
  .hn_tensor_to_r(t, layout)
}

hn_write_npy <- function(x, path, layout = c("rowmajor", "colmajor")) {
  path <- path.expand(.hn_arg_string(path, "path"))
  layout <- .hn_arg_layout(layout)
  t <- .hn_tensor_from_r(x, layout, "x", vector_is_row = FALSE)
  on.exit(c_hn_tensor_free(t))
  c_hn_tensor_save_npy(t, path)
  invisible(path)
}
