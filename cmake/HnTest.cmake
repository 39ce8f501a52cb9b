include(GoogleTest)
# hn_add_test(name SOURCES a.cc b.cc LABELS unit|ops|golden [LIBS extra])
function(hn_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT ARG_SOURCES)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  hn_set_warnings(${name})
  target_link_libraries(${name} PRIVATE hn_core GTest::gtest GTest::gtest_main ${ARG_LIBS})
  # tests/common/test_util.h: the helpers every C++ test shares.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE HN_FIXTURES_DIR="${HN_FIXTURES_DIR}"
                                             HN_TEST_TMPDIR="${CMAKE_BINARY_DIR}/test_tmp")
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
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
