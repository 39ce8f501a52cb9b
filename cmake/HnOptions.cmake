option(HN_BUILD_TESTS "Build the tests" ON)
option(HN_BUILD_BENCH "Build the benchmarks" ON)
option(HN_SANITIZE "Build with ASan + UBSan" OFF)
set(HN_FIXTURES_DIR "${CMAKE_SOURCE_DIR}/../shared/fixtures/mxnet" CACHE PATH
    "Folder of the MXNet-written fixture files")

find_program(HN_CCACHE ccache)
if(HN_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${HN_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${HN_CCACHE})
endif()

if(HN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
