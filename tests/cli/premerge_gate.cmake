# premerge_gate: the pre-merge default set is the CPU gate, so every CPU mutant must die on it
# (selftest --cases cases/premerge.csv: kill rate 100%, correct backends passing), among them
# the faults only the blind-spot cases at the end of the set expose: fp32 subnormals flushed
# (tiny regime), the sign of an all -0 output (zero-sign rows), E8M0 code 0 read as 2^-126
# (code0 regime). Without those cases (the set's lines before its "# Blind-spot cases"
# comment) the same three survive, so it is those cases that kill them.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(p 0 ${CLI} selftest --cases ${SRC}/cases/premerge.csv)
expect_match(p "${p_out}" "kill rate: [0-9]+/[0-9]+ \\(100%\\); correct backends passing: 4/4")
expect_no_match(p "${p_out}" "SURVIVED")
expect_match(p "${p_out}" "KILLED +mut-flush-subnormal +by [^\n]*got 0x0000")
expect_match(p "${p_out}" "KILLED +mut-zero-sign +by [^\n]*got 0x8000 expected 0x0000")
expect_match(p "${p_out}" "KILLED +mut-e8m0-code0 +by c0_[^\n]*E8M0 code 0 present")

file(READ ${SRC}/cases/premerge.csv all)
string(FIND "${all}" "# Blind-spot cases" cut)
if(cut LESS 0)
  message(FATAL_ERROR "cases/premerge.csv has no '# Blind-spot cases' comment")
endif()
string(SUBSTRING "${all}" 0 ${cut} before)
file(WRITE ${WORK}/before.csv "${before}")
expect_run(b 1 ${CLI} selftest --cases ${WORK}/before.csv
           --only mut-flush-subnormal,mut-zero-sign,mut-e8m0-code0)
foreach(m mut-flush-subnormal mut-zero-sign mut-e8m0-code0)
  expect_match(b "${b_out}" "SURVIVED ${m}")
endforeach()
