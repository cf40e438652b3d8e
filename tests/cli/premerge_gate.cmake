# premerge_gate: the pre-merge default set is the CPU gate, so every CPU mutant must die on it
# (selftest --cases cases/premerge.csv: kill rate 100%, correct backends passing), among them
# the faults only the blind-spot cases at the end of the set expose: fp32 subnormals flushed
# (tiny regime), the sign of an all -0 output (zero-sign rows), E8M0 code 0 read as 2^-126
# (code0 regime). Without those cases (the set's lines before its "# Blind-spot cases"
# comment) the same three survive, so it is those cases that kill them. Likewise the four
# faults of the sections from "# Range edges" on (contracts §4.3, §5.1): a saturating bf16
# conversion and a combined scale formed in fp32 (range regime), one padded-M bucket's tile
# reading the wrong scale rows (M in 64..128), a persistent grid skipping block 0 from tile
# 256 on (grids past 256 tiles): killed there, and alive on every line before it.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(p 0 ${CLI} selftest --cases ${SRC}/cases/premerge.csv)
expect_match(p "${p_out}" "kill rate: [0-9]+/[0-9]+ \\(100%\\); correct backends passing: 4/4")
expect_no_match(p "${p_out}" "SURVIVED")
expect_match(p "${p_out}" "KILLED +mut-flush-subnormal +by [^\n]*got 0x0000")
expect_match(p "${p_out}" "KILLED +mut-zero-sign +by [^\n]*got 0x8000 expected 0x0000")
expect_match(p "${p_out}" "KILLED +mut-e8m0-code0 +by c0_[^\n]*E8M0 code 0 present")
expect_match(p "${p_out}" "KILLED +mut-bf16-saturate +by r_[^\n]*got 0x7f7f expected 0x7f80")
expect_match(p "${p_out}" "KILLED +mut-scale-f32-first +by r_")
expect_match(p "${p_out}" "KILLED +mut-bucket-rows64 +by b_m(65|97|113|127)_")
expect_match(p "${p_out}" "KILLED +mut-persistent-skip +by g_")

file(READ ${SRC}/cases/premerge.csv all)
# The set's lines before the comment `marker` alone: every mutant of `mutants` survives there.
function(survive_before tag marker mutants)
  string(FIND "${all}" "${marker}" cut)
  if(cut LESS 0)
    message(FATAL_ERROR "cases/premerge.csv has no '${marker}' comment")
  endif()
  string(SUBSTRING "${all}" 0 ${cut} before)
  file(WRITE ${WORK}/${tag}.csv "${before}")
  string(REPLACE ";" "," only "${mutants}")
  expect_run(${tag} 1 ${CLI} selftest --cases ${WORK}/${tag}.csv --only ${only})
  foreach(m ${mutants})
    expect_match(${tag} "${${tag}_out}" "SURVIVED ${m}")
  endforeach()
endfunction()
survive_before(before "# Blind-spot cases" "mut-flush-subnormal;mut-zero-sign;mut-e8m0-code0")
survive_before(before2 "# Range edges"
               "mut-bf16-saturate;mut-scale-f32-first;mut-bucket-rows64;mut-persistent-skip")
