# quant-parity (harness/commands/quant_parity.c): per layer shape, the share of 32-blocks whose
# E8M0 code differs between the even (Triton) and round_up (HIP) quantizers and the output
# difference through the exact oracle; --json gives the same numbers; the same report twice
# (generated from the shape and --seed); bad usage exits 2.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(t 0 ${CLI} quant-parity 16 1024 5120 1 256 512)
expect_match(t "${t_out}" "qp_m16_n1024_k5120 M=16 N=1024 K=5120: scale code differs in [1-9][0-9]* of 2560 blocks \\([0-9.]+%; round_up above even in [1-9][0-9]*, below in 0\\), [0-9]+ fp4 bytes differ; y differs in [1-9][0-9]* of 16384 outputs, max [0-9]+ ULP; ULP histogram 0:")
expect_match(t "${t_out}" "qp_m1_n256_k512 M=1 N=256 K=512: ")
expect_run(t2 0 ${CLI} quant-parity 16 1024 5120 1 256 512)
if(NOT t_out STREQUAL t2_out)
  message(FATAL_ERROR "quant-parity is not deterministic")
endif()
file(WRITE ${WORK}/s.csv "M,N,K\n4,512,4096\n")
expect_run(j 0 ${CLI} quant-parity --cases ${WORK}/s.csv --format json)
string(JSON blocks GET "${j_out}" blocks)
string(JSON diff GET "${j_out}" blocks_scale_differs)
string(JSON below GET "${j_out}" round_up_below_even)
string(JSON nh LENGTH "${j_out}" ulp_histogram)
if(NOT blocks EQUAL 512 OR diff LESS 1 OR NOT below EQUAL 0 OR NOT nh EQUAL 18)
  message(FATAL_ERROR "quant-parity --json: blocks ${blocks}, differ ${diff}, below ${below}, bins ${nh}")
endif()
expect_run(b1 2 ${CLI} quant-parity 16 1024)
expect_run(b2 2 ${CLI} quant-parity 16 1024 5000)
expect_run(b3 2 ${CLI} quant-parity)
