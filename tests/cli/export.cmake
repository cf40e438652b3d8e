# `a4w4check export`: operand bundles of the edge set and the golden bundles, the manifest,
# --max-bytes refusing before anything is written, shards that partition the matrix, bad usage.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(e 0 ${CLI} export --set edge --out ${WORK}/all --quiet)
expect_match(e "${e_out}" "export: 35 operand bundles.*; 1 items not exported")
file(READ ${WORK}/all/manifest.json manifest)
expect_match(m "${manifest}" "\"format\":[ \t]*\"a4w4-operands/1\"")
expect_match(m "${manifest}" "\"golden/g3_m33_n256_k768\"")
expect_match(m "${manifest}" "\"golden/q1_quant_modes\":[ \t]*\"a4w4-quant/1 bundle: no GEMM operands\"")
expect_match(m "${manifest}" "\"with_expected\":[ \t]*false")
file(GLOB all ${WORK}/all/*.safetensors)
list(LENGTH all nall)
if(NOT nall EQUAL 35)
  message(FATAL_ERROR "expected 35 operand bundles, found ${nall}")
endif()
if(NOT EXISTS ${WORK}/all/golden__g1_m1_n256_k512.safetensors)
  message(FATAL_ERROR "golden bundle g1 not exported under its item file name")
endif()

# no answer in an operand bundle unless asked; with --with-expected, y_exact is there
file(READ ${WORK}/all/e_k96.safetensors head OFFSET 8 LIMIT 1500)
expect_no_match(y "${head}" "y_exact")
expect_match(a "${head}" "\"absent\":\"w_fp4_shuffled: preshuffle needs[^\"]*; w_scale_swizzled: swizzle needs")
expect_run(e 0 ${CLI} export --set edge --no-golden --with-expected --out ${WORK}/exp --quiet)
file(READ ${WORK}/exp/e_n8.safetensors head OFFSET 8 LIMIT 1500)
expect_match(y "${head}" "\"y_exact\":{\"dtype\":\"BF16\",\"shape\":\\[7,8\\]")

# an export cut short (here refused at a golden bundle after the cases were written) leaves no
# manifest: before, the earlier export's stayed, listing its cases beside the new bundles
expect_run(e 0 ${CLI} export --set edge --no-golden --out ${WORK}/cut --quiet)
file(WRITE ${WORK}/badgold/short.safetensors "short")
expect_run(e 2 ${CLI} export --set edge --golden ${WORK}/badgold --out ${WORK}/cut --quiet)
expect_match(e "${e_err}" "short.safetensors: file is shorter than 8 bytes")
if(EXISTS ${WORK}/cut/manifest.json OR NOT EXISTS ${WORK}/cut/e_k96.safetensors)
  message(FATAL_ERROR "export cut short: an earlier manifest.json left beside the new bundles")
endif()

# --max-bytes refuses before writing anything
expect_run(e 2 ${CLI} export --set nightly --max-bytes 1G --out ${WORK}/big)
expect_match(e "${e_err}" "over --max-bytes 1000000000 \\(nothing written")
if(EXISTS ${WORK}/big)
  message(FATAL_ERROR "export --max-bytes left ${WORK}/big behind")
endif()

# shards partition the matrix: 1/2 and 2/2 together are the whole export
expect_run(e 0 ${CLI} export --set edge --shard 1/2 --out ${WORK}/s1 --quiet)
expect_run(e 0 ${CLI} export --set edge --shard 2/2 --out ${WORK}/s2 --quiet)
file(GLOB s1 RELATIVE ${WORK}/s1 ${WORK}/s1/*.safetensors)
file(GLOB s2 RELATIVE ${WORK}/s2 ${WORK}/s2/*.safetensors)
file(GLOB whole RELATIVE ${WORK}/all ${WORK}/all/*.safetensors)
set(both ${s1} ${s2})
list(SORT both)
list(SORT whole)
if(NOT "${both}" STREQUAL "${whole}")
  message(FATAL_ERROR "shards 1/2 + 2/2 != whole export:\n${both}\nvs\n${whole}")
endif()
foreach(f ${s1})
  list(FIND s2 "${f}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${f} in both shards")
  endif()
endforeach()

# bad usage: one line, exit 2
expect_run(e 2 ${CLI} export --shard 3/2)
expect_match(e "${e_err}" "--shard '3/2' must be i/n")
expect_run(e 2 ${CLI} export --set premerge --cases x.csv)
expect_run(e 2 ${CLI} export --set no_such_set)
expect_match(e "${e_err}" "no_such_set")
expect_run(e 2 ${CLI} export --max-bytes lots)
expect_run(e 2 ${CLI} export --bogus)
