.onLoad <- function(libname, pkgname) {
  lib_abi <- c_hn_abi_version()
  if (lib_abi != hnr_header_abi_version()) {
    stop(sprintf(paste0("hybridnet: the loaded libhybridnet has ABI %d but this package was ",
                        "built for ABI %d: reinstall the package against this library"),
                 lib_abi, hnr_header_abi_version()), call. = FALSE)
  }
}
