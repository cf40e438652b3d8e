# invariance: the prediction over AITER's shipped tables (one summary line per table, every
# pair that is not invariant with its first break and cause), the vLLM 64/65 switch as data,
# the Markdown map and JSON lines; bad input exits 2 with one line and nothing on stdout.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(r 0 ${CLI} invariance)
expect_match(r "${r_out}" "a4w4_blockscale_tuned_gemm.csv: 127 \\(N, K\\) pairs over M 1\\.\\.838785: [0-9]+ invariant")
expect_match(r "${r_out}" "dsv3_a4w4_blockscale_tuned_gemm.csv: 2 \\(N, K\\) pairs")
# a layer the policy keeps on Triton (N <= 128) has no declared contract: unknown
expect_match(r "${r_out}" "N 128 K 49920: unknown")
# a CK kernel past an ASM one: unknown until a contract is declared for CK kernels
expect_match(r "${r_out}" "N 1280 K 8192: unknown, first break at M = 65: M 64 -> 65: ASM 32x128 split-K 1 -> CK ")
expect_run(r 0 ${CLI} invariance --tuned ${SRC}/cases/aiter/a4w4_blockscale_tuned_gemm.csv
  "--ck-contract" "ordered(1)" "--triton-contract" "ordered(1)" --m-max 65536)
expect_match(r "${r_out}" "127 \\(N, K\\) pairs over M 1\\.\\.65536: 127 invariant, 0 variant")
expect_match(r "${r_out}" "N 1280 K 8192: invariant \\([0-9]+ paths over [0-9]+ runs of M, every one ordered\\(1\\)\\)")
# vLLM sends M <= 64 to Triton preshuffle: with another contract there, variant from M 65
expect_run(r 0 ${CLI} invariance --tuned ${SRC}/cases/aiter/dsv3_a4w4_blockscale_tuned_gemm.csv
  "--switch" "64:triton-preshuffle:ordered(2)" --format markdown)
expect_match(r "${r_out}" "\\| 7168 \\| 4608 \\| inv \\| inv \\| inv \\| inv \\| inv \\| inv \\| inv \\| VAR \\|")
expect_match(r "${r_out}" "M 64 -> 65: triton-preshuffle \\(M <= 64\\) -> ASM 32x128 split-K 1: the contract changes from ordered\\(2\\) \\(M = 1\\) to ordered\\(1\\)")
expect_match(r "${r_out}" "0 invariant, 2 variant, 0 nondeterministic, 0 unknown; first break at M = 65")
expect_run(r 0 ${CLI} invariance --shapes ${SRC}/cases/route_shapes.csv --format json --m-max 300)
expect_match(r "${r_out}" "\"table\":\"[^\"]*route_shapes.csv\",\"pairs\":16,\"m_max\":300")
# bad input
expect_run(r 2 ${CLI} invariance --switch 64)
expect_match(r "${r_err}" "switch '64': not M:NAME or M:NAME:CONTRACT")
expect_no_match(r "${r_out}" ".")
expect_run(r 2 ${CLI} invariance --switch 64:a --switch 64:b)
expect_match(r "${r_err}" "a switch at M 64 is already given")
expect_run(r 2 ${CLI} invariance --ck-contract ordered)
expect_match(r "${r_err}" "--ck-contract: contract 'ordered'")
expect_run(r 2 ${CLI} invariance --cases ${SRC}/cases/edge.csv --shapes ${SRC}/cases/route_shapes.csv)
expect_match(r "${r_err}" "--cases and --shapes exclude each other")
expect_run(r 2 ${CLI} invariance --gfx gfx942)
expect_run(r 2 ${CLI} invariance --m-max 0)
file(WRITE ${WORK}/shapes.csv "M,N,K\n1,512,100\n")
expect_run(r 2 ${CLI} invariance --shapes ${WORK}/shapes.csv)
expect_match(r "${r_err}" "N 512 K 100: N must be in 1\\.\\.[0-9]+ and K a positive multiple of 32")
expect_no_match(r "${r_out}" ".")
# measured: the CPU systems under test are batch-invariant as their contract and the tables
# predict (exit 0); the batch-variant mutant is flagged at M 65 and not at M 64 (exit 1)
file(WRITE ${WORK}/pairs.csv "M,N,K\n1,64,1024\n1,512,4096\n")
expect_run(r 0 ${CLI} invariance --measure cpu-asm --shapes ${WORK}/pairs.csv --m 1,64,65 --follows-dispatch)
expect_match(r "${r_out}" "cpu-asm N 512 K 4096 M 65: invariant at M 65 \\(34816 outputs compared\\); declared contract predicts invariant; tables predict invariant\n")
expect_match(r "${r_out}" "cpu-asm: 6 measurements, 0 disagree with their prediction or failed, 0 n/a")
expect_run(r 1 ${CLI} invariance --measure mut-batch-splitk --shapes ${WORK}/pairs.csv --m 64,65)
expect_match(r "${r_out}" "N 64 K 1024 M 64: invariant at M 64 [^\n]*predicts invariant\n")
expect_match(r "${r_out}" "N 64 K 1024 M 65: variant at M 65 \\(3 rows, [0-9]+ of 4352 outputs, max [0-9]+ ULP\\); declared contract predicts invariant: DISAGREES")
expect_match(r "${r_out}" "mut-batch-splitk: 4 measurements, 2 disagree")
expect_run(r 2 ${CLI} invariance --measure cpu-asm)
expect_match(r "${r_err}" "--measure needs the pairs of --cases or --shapes")
expect_run(r 2 ${CLI} invariance --measure nosuch --shapes ${WORK}/pairs.csv)
expect_match(r "${r_err}" "--measure: --backend 'nosuch' is not a registered backend")
expect_run(r 2 ${CLI} invariance --measure mut-swizzle-d1d4 --shapes ${WORK}/pairs.csv)
expect_match(r "${r_err}" "has no GEMM outputs to measure")
expect_run(r 2 ${CLI} invariance --m 1,2)
expect_run(r 2 ${CLI} invariance --measure cpu-asm --shapes ${WORK}/pairs.csv --m 0)
# the map as one HTML page: a cell per M bucket, coloured and named; one table per page
expect_run(r 0 ${CLI} invariance --tuned ${SRC}/cases/aiter/dsv3_a4w4_blockscale_tuned_gemm.csv
  "--switch" "64:triton-preshuffle:ordered(2)" --format html)
expect_match(r "${r_out}" "^<!DOCTYPE html>")
set(inv "<td class=\"c\" style=\"background:#009E73\">inv</td>")
expect_match(r "${r_out}" "<tr><td>7168</td><td>4608</td>${inv}${inv}${inv}${inv}${inv}${inv}${inv}<td class=\"c\" style=\"background:#D55E00\">VAR</td>")
expect_match(r "${r_out}" "M 64 -&gt; 65: triton-preshuffle")
expect_run(r 2 ${CLI} invariance --format html)
expect_match(r "${r_err}" "--format html makes one page")
# a plugin that crashes fails its measurement (exit 1), the others still run
expect_run(r 1 ${CLI} invariance --measure plugin:${TOOLS}/../plugins/liba4w4_crash_plugin.so
  --shapes ${WORK}/pairs.csv --m 1,2)
expect_match(r "${r_out}" "N 64 K 1024 M 1: invariant at M 1")
expect_match(r "${r_out}" "N 64 K 1024 M 2: FAILED: [^\n]*crashed: SIGSEGV")
expect_match(r "${r_out}" "4 measurements, 2 disagree with their prediction or failed, 0 n/a")
