# hn_add_test(name SOURCES a.cc b.cc LABELS unit|ops|golden [LIBS extra] [SHARDS n])
# Registers the binary as n CTest tests (default 1), each running one of gtest's n shards of its
# cases (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX), not one test per case: a process per case made
# `make test` start 6 000 processes, most of the time of its sanitizer stage. A case alone:
# `bin/<name> --gtest_filter=Suite.Case`.
function(hn_add_test name)
  cmake_parse_arguments(ARG "" "SHARDS" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT ARG_SOURCES)
    return()
  endif()
  if(NOT ARG_SHARDS)
    set(ARG_SHARDS 1)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  hn_set_warnings(${name})
  target_link_libraries(${name} PRIVATE hn_core GTest::gtest GTest::gtest_main ${ARG_LIBS})
  # tests/common/test_util.h: the helpers every C++ test shares.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE HN_FIXTURES_DIR="${HN_FIXTURES_DIR}"
                                             HN_TEST_TMPDIR="${CMAKE_BINARY_DIR}/test_tmp")
  math(EXPR last "${ARG_SHARDS} - 1")
  foreach(shard RANGE ${last})
    set(test ${name})
    if(ARG_SHARDS GREATER 1)
      set(test ${name}.shard${shard})
    endif()
    # --gtest_brief: the log of a failing shard shows its failures, not thousands of passes.
    add_test(NAME ${test} COMMAND ${name} --gtest_brief=1)
    set_tests_properties(${test} PROPERTIES LABELS "${ARG_LABELS}"
                         ENVIRONMENT "GTEST_TOTAL_SHARDS=${ARG_SHARDS};GTEST_SHARD_INDEX=${shard}")
  endforeach()
endfunction()

# hn_reference_python(VAR VENV DOC): the interpreter of a test-time reference venv under
# ~/.cache/hybridnet (cache variable VAR, e.g. set by a setup script), and VAR_RUN to run the
# tests with: that one, or the system Python (the tests then skip saying what is missing).
function(hn_reference_python var venv doc)
  set(${var} "$ENV{HOME}/.cache/hybridnet/${venv}/bin/python" CACHE FILEPATH "${doc}")
  if(EXISTS "${${var}}")
    set(${var}_RUN "${${var}}" PARENT_SCOPE)
  else()
    find_package(Python3 COMPONENTS Interpreter)
    set(${var}_RUN "${Python3_EXECUTABLE}" PARENT_SCOPE)
  endif()
endfunction()
