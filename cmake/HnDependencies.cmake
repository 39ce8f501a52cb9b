# Debian's OpenBLAS CMake config exports variables only and points into openblas-pthread/,
# so an INTERFACE target is built here from the header and the library.
find_path(HN_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-pthread openblas REQUIRED)
find_library(HN_OPENBLAS_LIBRARY openblas REQUIRED)
add_library(hn_openblas INTERFACE)
target_include_directories(hn_openblas SYSTEM INTERFACE ${HN_CBLAS_INCLUDE_DIR})
target_link_libraries(hn_openblas INTERFACE ${HN_OPENBLAS_LIBRARY})

# oneDNN (Debian libdnnl-dev): the convolution kernels (core/src/kernels/onednn_convolution.h) and sgemm (kernels/blas.h).
# Its CMake config also looks for OpenCL (the GPU runtime we do not use), so the header and the
# library are found directly. It runs on OpenMP, whose thread count SetNumThreads sets.
find_path(HN_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp REQUIRED)
find_library(HN_DNNL_LIBRARY dnnl REQUIRED)
add_library(hn_dnnl INTERFACE)
target_include_directories(hn_dnnl SYSTEM INTERFACE ${HN_DNNL_INCLUDE_DIR})
target_link_libraries(hn_dnnl INTERFACE ${HN_DNNL_LIBRARY})
find_package(OpenMP REQUIRED)

# libjpeg-turbo (Debian libjpeg62-turbo-dev, which scripts/setup.sh installs): JPEG decoding of
# RecordIO datasets (core/src/io/image.cc). Optional: without it the library still builds and
# decoding fails with HN_ERR_UNSUPPORTED saying what to install.
find_path(HN_JPEG_INCLUDE_DIR jpeglib.h)
find_library(HN_JPEG_LIBRARY jpeg)
add_library(hn_jpeg INTERFACE)
if(HN_JPEG_INCLUDE_DIR AND HN_JPEG_LIBRARY)
  target_link_libraries(hn_jpeg INTERFACE ${HN_JPEG_LIBRARY})
  set(HN_HAVE_JPEG ON)
else()
  message(STATUS "libjpeg (libjpeg62-turbo-dev) not found: image decoding is left out")
endif()

# libxsmm (Debian libxsmm-dev, which scripts/setup.sh installs; a static, position-independent
# archive): JIT kernels for the small products of the Winograd convolutions (kernels/blas.h
# RepeatedProduct). Optional: without it those products run on Gemm, slower.
find_path(HN_LIBXSMM_INCLUDE_DIR libxsmm.h)
find_library(HN_LIBXSMM_LIBRARY NAMES libxsmm.a xsmm)
add_library(hn_libxsmm INTERFACE)
if(HN_LIBXSMM_INCLUDE_DIR AND HN_LIBXSMM_LIBRARY)
  target_link_libraries(hn_libxsmm INTERFACE ${HN_LIBXSMM_LIBRARY} ${CMAKE_DL_LIBS})
  set(HN_HAVE_LIBXSMM ON)
else()
  message(STATUS "libxsmm (libxsmm-dev) not found: small products run on OpenBLAS")
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)
if(HN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HN_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# ONNX export: protoc compiles the official schema installed by Debian's libonnx-dev
# (onnx/onnx.proto, which selects the lite runtime); libprotobuf-lite is a run-time dependency.
find_package(Protobuf REQUIRED)
find_path(HN_ONNX_PROTO_DIR onnx/onnx.proto REQUIRED)
