# Expected run time (seconds, 2 busy cores, an empty ccache) of the tests that take longest.
# `ctest -jN` starts the most costly tests first, but it learns costs only from an earlier run in
# the same build tree; a fresh clone has none, so the long tests would start in registration
# order and finish last, one after another. Seeding CTest's cost file from this table lets them
# overlap with the short tests. CTest rewrites the file with measured costs after every run.
set(HN_TEST_COSTS
  python.source_install 320  golden.int8 240  r.standalone_install 180  onnx.models 140
  golden.quantize 150  golden.bf16 105  spark.munit 95  golden.models 80  spark.examples 65
  golden.ops 65  golden.viz 62
  cross_language.training 60  cross_language.portability 52  r.soak 60  onnx.ops 45
  java.soak 42  r.cmd_check 38
  scala.munit 35  golden.zoo 33  golden.example_finetune_mxnet 28
  diff.mxnet_random_graphs 27  golden.example_train_digits_mxnet 26  r.testthat 19
  python.golden_metrics_data 18  scala.examples 17  python.golden_losses 17
  examples.python_train_digits 16  java.junit 15)

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
