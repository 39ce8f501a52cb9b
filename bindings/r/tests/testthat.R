library(testthat)
library(hybridnet)

test_check("hybridnet")
