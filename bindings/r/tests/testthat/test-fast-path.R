# predict()'s fast path (one numeric array, one-input model: one .Call straight into the
# predictor's tensors) gives exactly what the general path (a list of inputs) gives.

test_that("the fast path equals the general path bit for bit in every layout and shape", {
  model <- hn_load(hn_tiny_export(), 0)                 # 4 -> 8 relu -> 3
  set.seed(3)
  x <- matrix(rnorm(5 * 4), nrow = 5)                    # 5 examples, one per row
  y <- predict(model, x)
  expect_identical(dim(y), c(5L, 3L))
  expect_identical(y, predict(model, list(x)))
  expect_identical(predict(model, t(x), layout = "colmajor"), t(y))
  expect_identical(predict(model, t(x), layout = "colmajor"),
                   predict(model, list(t(x)), layout = "colmajor"))
  # A vector is one example; a new batch size re-plans, and back again.
  expect_identical(predict(model, x[2, ]), predict(model, list(x[2, ])))
  expect_identical(predict(model, x), y)
  # A 3-D array (the model flattens it), in both layouts.
  x3 <- array(rnorm(2 * 1 * 4), c(2, 1, 4))
  expect_identical(predict(model, x3), predict(model, list(x3)))
  expect_identical(predict(model, aperm(x3), layout = "colmajor"),
                   predict(model, list(aperm(x3)), layout = "colmajor"))
  expect_identical(predict(model, x3), predict(model, matrix(x3, 2)))
  # Integer and logical input (NA becomes NaN).
  xi <- matrix(c(1:7, NA), nrow = 2)
  expect_identical(predict(model, xi), predict(model, list(xi)))
  # (The hidden relu maps NaN to 0 as MXNet's does, so compare with a NaN input, not NaN output.)
  expect_identical(predict(model, xi), predict(model, matrix(c(1:7, NaN), nrow = 2)))
  xl <- matrix(c(TRUE, FALSE), nrow = 2, ncol = 4)
  expect_identical(predict(model, xl), predict(model, list(xl)))
  hn_free(model)
})

test_that("the fast path reports bad input as the general path does", {
  model <- hn_load(hn_tiny_export(), 0)
  expect_error(predict(model, matrix(1, 2, 5)), class = "hybridnet_error_shape")
  expect_identical(dim(predict(model, matrix(1, 2, 4))), c(2L, 3L))  # usable afterwards
  expect_error(predict(model, matrix(1, 2, 4), layout = "sideways"),
               class = "hybridnet_error_invalid_argument")
  expect_error(predict(model, "a"), class = "hybridnet_error_invalid_argument")
  hn_free(model)
  expect_error(predict(model, matrix(1, 2, 4)), class = "hybridnet_error_invalid_argument")
  # The C entry point checks what it gets, whatever R code calls it with.
  fast <- hybridnet:::hnr_fast_predictor(hn_load(hn_tiny_export(), 0)@handle)
  expect_error(hybridnet:::hnr_fast_predict(NULL, matrix(1, 1, 4), "rowmajor"),
               class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::hnr_fast_predict(fast, list(1), "rowmajor"),
               class = "hybridnet_error_invalid_argument")
  expect_error(hybridnet:::hnr_fast_predict(fast, matrix(1, 1, 4), NA_character_),
               class = "hybridnet_error_invalid_argument")
  hybridnet:::hnr_fast_release(fast)
  hybridnet:::hnr_fast_release(fast)                      # twice is fine
  expect_error(hybridnet:::hnr_fast_predict(fast, matrix(1, 1, 4), "rowmajor"),
               class = "hybridnet_error_invalid_argument")
})

test_that("the fast path's native objects are freed by hn_free and by the GC", {
  prefix <- hn_tiny_export()
  invisible(gc())
  native0 <- hybridnet:::c_hn_debug_live_handles()
  local({
    model <- hn_load(prefix, 0)
    predict(model, matrix(1, 1, 4))
    predict(model, matrix(1, 3, 4))                      # a second input shape
  })
  invisible(gc())
  expect_identical(hybridnet:::c_hn_debug_live_handles(), native0)
  model <- hn_load(prefix, 0)
  predict(model, matrix(1, 1, 4))
  hn_free(model)
  expect_identical(hybridnet:::c_hn_debug_live_handles(), native0)
})
