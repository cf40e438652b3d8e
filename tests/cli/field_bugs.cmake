# The field's bug record as rules (ref/a4w4_hazard.c a4w4_bug_rules): `route` names the rules
# that flag a shape; `route --scan` lists every shape each rule flags; `hazards` lists each
# rule with the default tuned table's shapes it flags (and hazards.json holds them); `layers`
# lists them over its matrix; results entries carry "field_bugs"; the nightly set holds a case
# tagged for each bug a case can express, and route flags those of the shape rules.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(r 0 ${CLI} route 16 2048 1664 128 2048 768 64 2048 768 1 18432 16384 16384 800 5120)
expect_match(r "${r_out}" "M=16 N=2048 K=1664: [^\n]*; field bugs: ROCm/aiter#4176")
expect_match(r "${r_out}" "M=128 N=2048 K=768: [^\n]*; field bugs: ROCm/aiter#5377\n")
expect_no_match(r "${r_out}" "M=64 N=2048 K=768: [^\n]*field bugs")
expect_match(r "${r_out}" "M=1 N=18432 K=16384: tuned [^\n]*-> CK [^\n]*field bugs: ROCm/rocm-libraries#11774")
expect_match(r "${r_out}" "M=16384 N=800 K=5120: tuned [^\n]*128x512[^\n]*field bugs: contracts §5.3\n")
expect_run(j 0 ${CLI} route --json 16 2048 1664)
expect_match(j "${j_out}" "\"field_bugs\":\\[\"aiter-4176\",\"triton-11624\"\\]")

expect_run(s 0 ${CLI} route --scan --k 768,1664)
expect_match(s "${s_out}" "\naiter-4176 \\(ROCm/aiter#4176\\): [^\n]*: [1-9][0-9]* shapes\n  N=")
expect_match(s "${s_out}" "\naiter-5377 \\(ROCm/aiter#5377\\): [^\n]*: [1-9][0-9]* shapes\n  N=[0-9]+: M=65..256 \\(K=768\\)")
expect_match(s "${s_out}" "\nvllm-40754 \\(vllm-project/vllm#40754\\): [^\n]*: 0 shapes\n")

expect_run(h 0 ${CLI} hazards --quick --backend cpu-fallback --json --out ${WORK}/hz --quiet)
expect_match(h "${h_out}" "ck-11774 +ROCm/rocm-libraries#11774: [^\n]*: 24 of 1470 shapes: 1x18432x16384")
expect_match(h "${h_out}" "tile-128x512 +contracts §5.3: [^\n]*: 1 of 1470 shapes: 16384x800x5120\n")
file(READ ${WORK}/hz/hazards.json hz)
string(JSON nfb LENGTH "${hz}" field_bugs)
string(JSON tile GET "${hz}" field_bugs 5 id)
string(JSON tiles GET "${hz}" field_bugs 5 shapes 0)
if(NOT nfb EQUAL 9 OR NOT tile STREQUAL "tile-128x512" OR NOT tiles MATCHES "16384.*800.*5120")
  message(FATAL_ERROR "hazards.json field_bugs: ${nfb} rules, [5] ${tile} ${tiles}")
endif()

expect_run(l 0 ${CLI} layers --quiet --out ${WORK}/layers)
expect_match(l "${l_out}" "field bugs \\(ref/a4w4_hazard.c\\), over the layer matrix's gfx950 shapes")

# the nightly set: a case per expressible bug, flagged by its rule where the rule is a shape's
file(READ ${SRC}/cases/nightly.csv nightly)
foreach(id aiter-4176 aiter-5377 aiter-5261 ck-11774 tile-128x512 triton-11624 triton-8518)
  if(NOT nightly MATCHES "\nfb_[^\n]*,field-bug;${id};")
    message(FATAL_ERROR "cases/nightly.csv has no case tagged ${id}")
  endif()
endforeach()
string(REGEX MATCHALL "\nfb_[^,]*,[0-9]+,[0-9]+,[0-9]+" fb "${nightly}")
file(WRITE ${WORK}/fb.csv "name,M,N,K\n")
foreach(line ${fb})
  string(REGEX MATCH ",([0-9]+),([0-9]+),([0-9]+)$" m "${line}")
  file(APPEND ${WORK}/fb.csv "x,${CMAKE_MATCH_1},${CMAKE_MATCH_2},${CMAKE_MATCH_3}\n")
endforeach()
expect_run(n 0 ${CLI} route --cases ${WORK}/fb.csv)
foreach(c "ROCm/aiter#4176" "ROCm/aiter#5377" "ROCm/rocm-libraries#11774" "contracts §5.3")
  expect_match(n "${n_out}" "field bugs: [^\n]*${c}")
endforeach()

# results entries carry the rules of their shape
file(WRITE ${WORK}/c.csv "name,M,N,K,regime,seed,tags\nk1664,16,2048,1664,exact,1,x\n")
expect_run(run 0 ${CLI} run --cases ${WORK}/c.csv --no-golden --backend cpu-fallback --quiet --out ${WORK}/run)
file(READ ${WORK}/run/results.json doc)
string(JSON fb0 GET "${doc}" cases 1 field_bugs 0)
if(NOT fb0 STREQUAL "aiter-4176")
  message(FATAL_ERROR "results.json entry field_bugs[0] is '${fb0}', expected aiter-4176")
endif()
