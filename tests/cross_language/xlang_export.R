# The R side of the cross-language export check:
#   Rscript xlang_export.R PREFIX SEED IN.npy
# The same steps as xlang_cpp export and XlangExport.java: the seed MLP, seeded initialize,
# hybridize, one forward on IN, export.
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) == 3L)
suppressPackageStartupMessages(library(hybridnet))
hn_num_threads(1)
net <- hn_sequential(hn_dense(256, "relu"), hn_dense(128, "relu"), hn_dense(2))
hn_initialize(net, "uniform", seed = as.numeric(args[[2L]]))
hn_hybridize(net)
invisible(hn_forward(net, hn_read_npy(args[[3L]])))
hn_export(net, args[[1L]])
cat("R wrote ", args[[1L]], "-symbol.json and ", args[[1L]], "-0000.params\n", sep = "")
