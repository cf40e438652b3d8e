# selftest: every CPU mutant is killed on cases/selftest.csv and every correct backend passes
# (kill rate 100%, exit 0); a matrix too small to kill them reports survivors and exits 1;
# --gpu either runs (a GPU build with a GPU: the kill rate must still be 100%) or exits 3.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(s 0 ${CLI} selftest)
expect_match(s "${s_out}" "kill rate: 25/25 \\(100%\\); correct backends passing: 4/4")
expect_no_match(s "${s_out}" "SURVIVED")
foreach(m mut-preshuffle-k1n1 mut-swizzle-d1d4 mut-pad-ff mut-pad-00 mut-nibble-swap
          mut-e8m0-code0 mut-mode-round_up mut-mode-round_down mut-mode-ceil mut-mode-even
          mut-e2m1-trunc mut-drop-kblock mut-rows-small-n mut-splitk-bf16 mut-tail-unwritten
          mut-read-past-a mut-bounded-drop-block mut-flush-subnormal mut-zero-sign
          mut-act-scale-stride mut-bf16-saturate mut-scale-f32-first mut-bucket-rows64
          mut-persistent-skip)
  expect_match(s "${s_out}" "KILLED +${m} +by st_")
endforeach()
# each mutant dies of the check it was built for
expect_match(s "${s_out}" "mut-pad-ff +by st_m33_n64_k512: pad-dependent: valid outputs change with row pad 0xFF")
expect_match(s "${s_out}" "mut-pad-00 +by st_m33_n64_k512: pad-dependent: valid outputs change with row pad 0x00")
expect_match(s "${s_out}" "mut-tail-unwritten +by [^\n]*never written")
expect_match(s "${s_out}" "mut-read-past-a +by [^\n]*got 0x7fc0")
expect_match(s "${s_out}" "mut-flush-subnormal +by st_m9_n64_k512_tiny: [^\n]*got 0x0000")
expect_match(s "${s_out}" "mut-zero-sign +by [^\n]*got 0x8000 expected 0x0000")
expect_match(s "${s_out}" "mut-act-scale-stride +by st_m40_n48_k288: [^\n]*first in a_scale_shuffled")
expect_match(s "${s_out}" "mut-e8m0-code0 +by st_m16_n64_k256[^\n]*E8M0 code 0 present")
expect_match(s "${s_out}" "mut-preshuffle-k1n1 +by [^\n]*bytes differ, first in w_fp4_shuffled")
expect_match(s "${s_out}" "mut-swizzle-d1d4 +by [^\n]*bytes differ, first in (w_scale_swizzled|a_scale_shuffled)")
# the range regime (contracts §4.3): +Inf due where the saturating conversion gives 0x7F7F; a
# combined scale formed in fp32 is Inf (a zero dot times it NaN) where the block value is finite
expect_match(s "${s_out}" "mut-bf16-saturate +by st_m9_n32_k1024_range: [^\n]*got 0x7f7f expected 0x7f80")
expect_match(s "${s_out}" "mut-scale-f32-first +by st_m9_n32_k1024_range: ")
# the padded-M bucket 64 < M <= 128: row 64 first; more than 256 tiles: the last row (tile 256)
expect_match(s "${s_out}" "mut-bucket-rows64 +by st_m65_n64_k256: [^\n]*first at \\(64, ")
expect_match(s "${s_out}" "mut-persistent-skip +by st_m4097_n4096_k256: [^\n]*first at \\(4096, ")
# the batch-invariance stage: split-K past M = 64 under one declared contract is flagged; the
# correct CPU backends (ordered(1) at every M) measure invariant, as their contract predicts
expect_match(s "${s_out}" "KILLED +mut-batch-splitk +by invariance_m65_n64_k1024: batch invariance: variant at M 65 \\(3 rows, [0-9]+ of 4352 outputs[^\n]*declared contract predicts invariant: DISAGREES")
string(REGEX MATCHALL "batch invariance: invariant at M 65 \\(4352 outputs compared\\)" ctl "${s_out}")
list(LENGTH ctl nctl)
if(NOT nctl EQUAL 2)
  message(FATAL_ERROR "selftest: ${nctl} correct GEMM backends measured batch-invariant, expected 2\n${s_out}")
endif()
# the peers' tolerance criteria on each mutant's killing entry, the bit-exact verdict last:
# AITER's checkAllclose (5 % of elements may be off) passes the bf16-partials split-K
expect_match(s "${s_out}" "mutant +aiter +torch +te +fi-cos +cos-dq +sqnr +unit +norm +benchdnn bit-exact")
expect_match(s "${s_out}" "mut-splitk-bf16 +missed +caught[^\n]* caught\n")
expect_match(s "${s_out}" "mut-preshuffle-k1n1 +bytes ")
# the field's bug classes through their reproductions, three of them selftest's own GEMMs
foreach(f fb-preshuffle-unapplied fb-swizzle-d1d4-gemm fb-nan-scale-zero)
  expect_match(s "${s_out}" "KILLED +${f} +\\(field reproduction\\) by st_")
endforeach()
expect_match(s "${s_out}" "preshuffle unapplied \\(fb-preshuffle-unapplied\\) +caught ")
expect_match(s "${s_out}" "FTZ of fp32 subnormals \\(mut-flush-subnormal\\) +missed ")
# a plugin kernel is a mutant too (--plugin): the ref plugin with row 0 one ULP off is killed,
# and its row says AITER's checkAllclose would have shipped it
set(bad ${TOOLS}/../plugins/liba4w4_bad_plugin.so)
expect_run(p 0 ${CLI} selftest --only mut-drop-kblock --plugin ${bad})
expect_match(p "${p_out}" "kill rate: 2/2")
expect_match(p "${p_out}" "KILLED +plugin:[^\n]*liba4w4_bad_plugin.so by st_")
expect_match(p "${p_out}" "plugin:[^\n]*liba4w4_bad_plugin.so +missed +[^\n]* caught\n")
expect_run(pb 2 ${CLI} selftest --plugin ${WORK}/none.so)
expect_match(pb "${pb_err}" "selftest: --plugin")
foreach(b cpu-asm cpu-fallback ref-quant ref-layout)
  expect_match(s "${s_out}" "PASS +${b} +[1-9][0-9]* pass, 0 fail")
endforeach()

# a matrix that cannot expose most faults: survivors are reported and the exit code is 1
file(WRITE ${WORK}/weak.csv "name,M,N,K,regime,seed,tags\nw_m4_n32_k1024,4,32,1024,normal:ceil,1,x\n")
expect_run(w 1 ${CLI} selftest --cases ${WORK}/weak.csv)
expect_match(w "${w_out}" "SURVIVED mut-drop-kblock")
# the batch-invariance stage's odd M 65 shows a read past A as rows that change in the batch
expect_match(w "${w_out}" "KILLED +mut-read-past-a +by invariance_m65_n64_k1024: batch invariance: variant")
expect_match(w "${w_out}" "KILLED +mut-mode-ceil")
expect_match(w "${w_out}" "kill rate: [0-9]+/25 ")

# the per-output bound of bounded(S) (contracts §4.1) kills a bf16-atomic split-K that drops
# one whole 32-block of K, at K = 16384 (512 blocks, where the old bound let it pass)
expect_match(s "${s_out}" "mut-bounded-drop-block +by [^\n]*outside the bounded\\(4\\) bound")
file(WRITE ${WORK}/k16384.csv "name,M,N,K,regime,seed,tags\nbd_m4_n32_k16384,4,32,16384,normal,41,x\n")
expect_run(k 0 ${CLI} selftest --cases ${WORK}/k16384.csv --only mut-bounded-drop-block)
expect_match(k "${k_out}" "KILLED +mut-bounded-drop-block +by bd_m4_n32_k16384: [^\n]*outside the bounded\\(4\\) bound")

# --only, --list, bad usage
expect_run(o 0 ${CLI} selftest --only mut-drop-kblock,mut-e2m1-trunc)
expect_match(o "${o_out}" "kill rate: 2/2 \\(100%\\)")
expect_run(l 0 ${CLI} selftest --list)
expect_match(l "${l_out}" "mut-splitk-bf16 +2-way split-K")
expect_run(b 2 ${CLI} selftest --only mut-nope)
expect_match(b "${b_err}" "--only 'mut-nope' is not a mutant")
expect_run(b2 2 ${CLI} selftest --bogus)

execute_process(COMMAND ${CLI} selftest --gpu RESULT_VARIABLE g_rc OUTPUT_VARIABLE g_out
                ERROR_VARIABLE g_err)
if(g_rc EQUAL 3)
  expect_match(g "${g_err}" "selftest --gpu: no GPU")
elseif(g_rc EQUAL 0)
  expect_match(g "${g_out}" "kill rate: ([0-9]+)/\\1 \\(100%\\)")
else()
  message(FATAL_ERROR "selftest --gpu: exit ${g_rc}\n${g_out}\n${g_err}")
endif()
