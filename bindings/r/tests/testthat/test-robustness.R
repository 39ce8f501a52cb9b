# Nothing crashes R: every internal SWIG wrapper (c_hn_*, hnr_*) is called with wrong objects,
# NULL, NA, empty and oversized values, closed handles and handles of the wrong kind; each
# either works or raises a hybridnet_error (a crash would end this test run).

# Fresh native objects of every kind (plain handles, as the wrappers take them).
fixtures <- function(prefix) {
  f <- list()
  f$tensor <- hybridnet:::c_hn_tensor_create(0L, c(2, 2), c(1, 2, 3, 4))
  f$tensor_list <- hybridnet:::c_hn_tensor_list_create()
  hybridnet:::c_hn_tensor_list_append(f$tensor_list, "a", f$tensor)
  f$symbol <- hybridnet:::c_hn_symbol_var("data")
  fc <- hybridnet:::c_hn_symbol_create("FullyConnected", list(f$symbol), c(num_hidden = "3"), "fc")
  f$shape_info <- hybridnet:::c_hn_symbol_infer_shape(fc, list(data = c(2, 4)), 0L)
  f$block <- hn_dense(3, in_units = 2)@handle
  f$model <- hybridnet:::c_hn_model_load(prefix, 0L)
  f$predictor <- hybridnet:::c_hn_predictor_create(f$model)
  f$optimizer <- hybridnet:::c_hn_optimizer_create("sgd", NULL)
  owner <- list(f$block)
  hybridnet:::c_hn_block_param_count(f$block)
  names(owner) <- hybridnet:::c_hn_block_param_info(f$block, 0L)$name
  f$trainer <- hybridnet:::c_hn_trainer_create(owner, f$optimizer)
  f$metric <- hybridnet:::c_hn_metric_create("acc", NULL)
  f$data_loader <- hybridnet:::c_hn_data_loader_create(list(f$tensor), 1, 0L, "keep", 0)
  f
}

closed_handles <- function(prefix) {
  f <- fixtures(prefix)
  for (kind in names(f)) get(sprintf("c_hn_%s_free", kind), asNamespace("hybridnet"))(f[[kind]])
  f
}

# A plausible value for each SWIG input type.
valid_value <- function(type, f) {
  switch(type,
         character = "data",
         integer = 0L,
         `_p_int64_t` = c(2, 2),
         `_p_void` = c(1, 2, 3, 4),
         `_p_uint64_t` = 1,
         `_p_SEXP` = f$tensor,
         `_p_p_hn_tensor` = list(f$tensor),
         `_p_p_hn_symbol` = list(f$symbol),
         f[[sub("^_p_hn_", "", type)]])
}

# (No large counts that are valid numbers: e.g. hn_block_trace(block, 2^31) really tries to
# make 2^31 symbolic inputs, which is the C API's business, not a binding's.)
bad_values <- function(prefix) {
  closed <- closed_handles(prefix)
  live <- fixtures(prefix)
  c(list(NULL, 42, -1, 1e300, NaN, NA, NA_character_, "x", "", character(0), integer(0),
         c(1, 2), c("a", "b"), TRUE, list(), list(1), list(NULL), raw(3), function() 1,
         new.env(), new("externalptr"), quote(x), 2^60, -2^53, 1.5,
         structure(list(), class = "HybridnetModel"), rep(1, 40)),
    unname(closed), unname(live))
}

test_that("every raw wrapper rejects wrong arguments with a hybridnet_error, never a crash", {
  prefix <- hn_tiny_export()
  restore_limits <- hn_local_settings(hn_test_dir("fuzz"))  # wrappers that write files write here
  ns <- asNamespace("hybridnet")
  wrappers <- ls(ns, pattern = "^(c_hn_|hnr_)")
  expect_gt(length(wrappers), 80L)
  bad <- bad_values(prefix)
  unexpected <- character()
  calls <- 0L
  try_call <- function(name, args) {
    calls <<- calls + 1L
    result <- tryCatch({
      do.call(get(name, ns), args, quote = TRUE)
      NULL
    }, error = function(e) e)
    if (name == "c_hn_set_limit") restore_limits()
    if (!is.null(result) && !inherits(result, "hybridnet_error")) {
      unexpected <<- c(unexpected, sprintf("%s: %s", name, conditionMessage(result)))
    }
  }
  for (name in wrappers) {
    fn <- get(name, ns)
    types <- attr(fn, "inputTypes")
    if (length(types) == 0L) {
      try_call(name, list())
      next
    }
    for (v in bad) {
      try_call(name, rep(list(v), length(types)))                  # every argument wrong
      for (i in seq_along(types)) {                                 # one argument wrong
        f <- fixtures(prefix)
        args <- lapply(types, valid_value, f = f)
        args[i] <- list(v)
        try_call(name, args)
      }
    }
  }
  expect_gt(calls, 5000L)
  expect_identical(unexpected, character())
})

test_that("the public functions reject wrong objects without crashing", {
  model <- hn_load(hn_tiny_export(), 0)
  net <- hn_sequential(hn_dense(2))
  odd <- list(NULL, 42, "x", NA, list(), new("externalptr"), model, net, function() 1)
  fns <- list(
    function(v) hn_load(v), function(v) hn_load("x", v), function(v) predict(model, v),
    function(v) hn_forward(v, 1), function(v) hn_forward(net, v),
    function(v) hn_add(net, v), function(v) hn_add(v, net), function(v) hn_initialize(v),
    function(v) hn_initialize(net, initializer = v), function(v) hn_hybridize(v),
    function(v) hn_export(v, "p"), function(v) hn_export(net, v), function(v) hn_to_json(v),
    function(v) hn_dense(v), function(v) hn_dense(2, activation = v), function(v) hn_read_npy(v), function(v) hn_write_npy(v, "x"),
    function(v) hn_seed(v), function(v) hn_num_threads(v), function(v) hn_input_names(v),
    function(v) hn_load_buffers(v, raw(1)), function(v) hn_import(v),
    function(v) hn_parameters(v), function(v) hn_save_parameters(net, v),
    function(v) hn_is_closed(v), function(v) hn_free(v))  # last: frees model and net
  hn_local_settings(hn_test_dir("public-fuzz"))
  for (fn in fns) {
    for (v in odd) {
      result <- tryCatch(fn(v), error = function(e) e, warning = function(w) NULL)
      if (inherits(result, "error")) expect_s3_class(result, "hybridnet_error")
    }
  }
})

test_that("numbers out of the C types' ranges are rejected before the C call", {
  expect_error(hybridnet:::c_hn_set_num_threads(2^31), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_op_name(-1), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_op_name(2^53 + 2), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_seed(-1), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_tensor_create(0L, c(2, NA), NULL), class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::c_hn_tensor_create(0L, rep(1, 33), NULL), class = "hybridnet_error_invalid_argument")
  expect_error(predict(42, matrix(1, 1, 4)))        # S3 dispatch: no method for a number
})
