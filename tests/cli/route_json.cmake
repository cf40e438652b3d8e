# route --json on a fixed shape list (cases/route_shapes.csv: tuned hits at M, padded gl0 and
# gl1, CK rows, heuristic shapes) equals the checked-in tests/data/route_expected.jsonl.
# Run from the scratch dir, so the default tables resolve through the source tree.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
execute_process(COMMAND ${CLI} route --json --cases ${SRC}/cases/route_shapes.csv
  WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "route --json: exit ${rc}\n${err}")
endif()
file(READ ${SRC}/tests/data/route_expected.jsonl expected)
if(NOT out STREQUAL expected)
  file(WRITE ${WORK}/route_actual.jsonl "${out}")
  message(FATAL_ERROR "route --json differs from tests/data/route_expected.jsonl; actual output "
    "in ${WORK}/route_actual.jsonl (diff the two)")
endif()
# The same shapes given on the command line give the same lines.
expect_run(r 0 ${CLI} route --json 16 128 5120 1 512 4096)
string(REGEX MATCH "[^\n]*\"M\":16,\"N\":128,\"K\":5120[^\n]*\n" line16 "${expected}")
string(REGEX MATCH "[^\n]*\"M\":1,\"N\":512,\"K\":4096[^\n]*\n" line1 "${expected}")
if(NOT r_out STREQUAL "${line16}${line1}")
  message(FATAL_ERROR "route --json M N K ... differs from the --cases lines:\n${r_out}")
endif()
# Human output: one line per shape, with source, kernel, possible winners and the policy.
expect_run(h 0 ${CLI} route 16 128 5120 3 512 4096)
expect_match(h "${h_out}" "M=16 N=128 K=5120: heuristic -> ASM 256x256/splitK [^\n]*possible winners 1 [^\n]*policy triton \\(small_n\\)(; field bugs: triton-lang/triton#11624)?\n")
expect_match(h "${h_out}" "M=3 N=512 K=4096: tuned_padded_gl0 \\(row M=16, [^\n]*a4w4_blockscale_tuned_gemm.csv:204\\)")
expect_run(help 0 ${CLI} route --help)
expect_match(help "${help_out}" "usage: a4w4check route")
