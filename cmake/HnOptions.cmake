option(HN_BUILD_TESTS "Build the tests" ON)
option(HN_BUILD_BENCH "Build the benchmarks" ON)
option(HN_SANITIZE "Build with ASan + UBSan" OFF)
option(HN_TSAN "Build with ThreadSanitizer (make test-tsan: the concurrency tests)" OFF)
option(HN_FUZZ "Build the libFuzzer targets (clang; make fuzz), ASan + UBSan everywhere" OFF)
# The MXNet-written files the tests and the demo read: part of the repository (tests/data/mxnet).
set(HN_FIXTURES_DIR "${PROJECT_SOURCE_DIR}/tests/data/mxnet")

find_program(HN_CCACHE ccache)
if(HN_CCACHE)
  # Paths under the source folder are hashed as relative ones and the working folder is not
  # hashed, so a clone in another folder (CI's, a developer's second one) reuses the objects.
  set(hn_ccache_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_NOHASHDIR=1 ${HN_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${hn_ccache_launcher})
  set(CMAKE_C_COMPILER_LAUNCHER ${hn_ccache_launcher})
endif()

if(HN_SANITIZE AND HN_TSAN)
  # The two runtimes cannot share a process: use one build folder per sanitizer.
  message(FATAL_ERROR "HN_SANITIZE and HN_TSAN are mutually exclusive")
endif()
if(HN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HN_FUZZ needs clang (CXX=clang++-14): libFuzzer is part of clang")
  endif()
  # -Wno-pass-failed: the sanitizers' instrumentation keeps clang from vectorizing the
  # `omp simd` loops it was asked to; a lost optimization in this build, not a defect.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -Wno-pass-failed)
  add_link_options(-fsanitize=address,undefined)
endif()
if(HN_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
if(HN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
