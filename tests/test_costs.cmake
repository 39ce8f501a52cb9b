# Expected run time (seconds, 2 busy cores) of the tests that take longest. `ctest -jN` starts
# the most costly tests first, but it learns costs only from an earlier run in the same build
# tree; a fresh clone has none, so the long tests would start in registration order and finish
# last, one after another. Seeding CTest's cost file from this table lets them overlap with the
# thousands of short tests. CTest rewrites the file with measured costs after every run.
set(HN_TEST_COSTS
  r.standalone_install 670  onnx.models 440  spark.munit 220  r.soak 220  golden.models 220
  spark.examples 160  java.soak 160  golden.ops 155  golden.zoo 155  python.source_install 120
  r.cmd_check 105  cross_language.portability 95  onnx.ops 85  r.testthat 70
  diff.mxnet_random_graphs 65  scala.munit 65  scala.examples 50  diff.random_graphs 45
  java.junit 40)

set(hn_cost_file "${CMAKE_BINARY_DIR}/Testing/Temporary/CTestCostData.txt")
if(NOT EXISTS "${hn_cost_file}")
  set(hn_cost_lines "")
  list(LENGTH HN_TEST_COSTS hn_cost_count)
  math(EXPR hn_cost_last "${hn_cost_count} - 1")
  foreach(i RANGE 0 ${hn_cost_last} 2)
    math(EXPR j "${i} + 1")
    list(GET HN_TEST_COSTS ${i} hn_test)
    list(GET HN_TEST_COSTS ${j} hn_seconds)
    # CTest's format: name, number of earlier runs, average seconds.
    string(APPEND hn_cost_lines "${hn_test} 1 ${hn_seconds}\n")
  endforeach()
  file(WRITE "${hn_cost_file}" "${hn_cost_lines}---\n")
endif()
