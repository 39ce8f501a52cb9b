# How R arrays map to the model's row-major shapes (see ?predict.HybridnetModel).

flatten_net <- function() {
  net <- hn_sequential(hn_flatten())
  hn_initialize(net)
  net
}

test_that("rowmajor: dim(x) is the model's shape and x[i, j, k] is element [i-1, j-1, k-1]", {
  a <- array(seq_len(2 * 3 * 4), dim = c(2, 3, 4))
  y <- hn_forward(flatten_net(), a)             # Flatten: (2, 3, 4) -> (2, 12), C order
  expect_identical(dim(y), c(2L, 12L))
  for (i in 1:2) {
    # C order within example i: the last index runs fastest.
    expect_identical(y[i, ], as.double(c(t(a[i, , ]))))
  }
  expect_identical(y[2, 1 * 4 + 3], as.double(a[2, 2, 3]))
})

test_that("colmajor: dim(x) is the model's shape reversed (MXNet R) and memory is shared as is", {
  a <- array(seq_len(2 * 3 * 4), dim = c(2, 3, 4))
  b <- aperm(a)                                # dim (4, 3, 2): the same tensor in colmajor
  y_row <- hn_forward(flatten_net(), a)
  y_col <- hn_forward(flatten_net(), b, layout = "colmajor")
  expect_identical(dim(y_col), c(12L, 2L))
  expect_identical(y_col, t(y_row))
  expect_identical(as.vector(y_col), as.double(as.vector(b)))  # no reordering at all
})

test_that("a vector is one example (a 1 x n row) for predict and forward", {
  net <- hn_sequential(hn_dense(3, in_units = 5))
  hn_initialize(net, seed = 1)
  v <- c(0.5, -1, 2, 0, 1)
  y <- hn_forward(net, v)
  expect_identical(dim(y), c(1L, 3L))
  expect_identical(y, hn_forward(net, matrix(v, nrow = 1)))
})

test_that("npy files keep the same mapping (a vector stays 1-D)", {
  dir <- hn_test_dir("npy")
  a <- array(rnorm(24), dim = c(2, 3, 4))
  hn_write_npy(a, file.path(dir, "a.npy"))
  back <- hn_read_npy(file.path(dir, "a.npy"))
  expect_identical(dim(back), dim(a))
  expect_equal(back, a, tolerance = 1e-6)           # float32 on disk
  expect_identical(hn_read_npy(file.path(dir, "a.npy"), layout = "colmajor"), aperm(back))
  hn_write_npy(1:5, file.path(dir, "v.npy"))
  expect_identical(hn_read_npy(file.path(dir, "v.npy")), as.double(1:5))
  hn_write_npy(aperm(a), file.path(dir, "b.npy"), layout = "colmajor")
  expect_identical(hn_read_npy(file.path(dir, "b.npy")), back)
})
