# route at the limits of its shapes and tables (found by the fuzz targets, tests/fuzz): K = 2^30
# routes without int overflow (the sanitizer build checks); a shape whose tile count leaves
# AITER's uint32 is refused naming the limit; errors quoting a table field stay one line.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(r 0 ${CLI} route --no-tuned 4096 4096 1073741824)
expect_match(r "${r_out}" "log2_k_split 0, grid 16x16x1, k_per_tg 1073741824;")
expect_run(r 0 ${CLI} route --no-tuned --format json 4096 4096 1073741824)
expect_match(r "${r_out}" "\"k_per_tg\":1073741824,\"grid\":\\[16,16,1\\]")
# 1x1 tiles on one CU: 65535 x 65537 = 2^32 - 1 tiles still route, one more row does not
file(WRITE ${WORK}/unit.csv "tile_M,tile_N,splitK,bpreshuffle,knl_name\n1,1,0,1,_ZN5aiter_unit\n")
expect_run(r 0 ${CLI} route --no-tuned --kernels ${WORK}/unit.csv --cu 1 65535 65537 32)
expect_match(r "${r_out}" "heuristic -> ASM 1x1 _ZN5aiter_unit")
expect_run(r 2 ${CLI} route --no-tuned --kernels ${WORK}/unit.csv --cu 1 65536 65537 32)
expect_match(r "${r_err}" "needs 4295032832 tiles times split 1, past AITER's uint32 tile count limit 4294967295")
expect_no_match(r "${r_out}" ".")
# a quoted field holding a line break is shown with '?': one line on stderr
set(H "gfx,cu_num,M,N,K,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n")
file(WRITE ${WORK}/nl.csv "${H}gfx950,256,\"1\n6\",512,4096,21,0,5.4,k,0.78,194.57,0\n")
expect_run(r 2 ${CLI} route --tuned ${WORK}/nl.csv 1 512 4096)
expect_match(r "${r_err}" "nl.csv:2:12: M is '1\\?6', not an integer")
string(REGEX MATCHALL "\n" lines "${r_err}")
list(LENGTH lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "the error is ${n} lines:\n${r_err}")
endif()
