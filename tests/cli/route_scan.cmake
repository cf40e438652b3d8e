# route --scan: the static hazard scan behind docs/findings.md. Its summary is pinned
# here (tests/data/route_scan_summary.json), so a change to the tables or the rules that moves
# the finding fails this test instead of silently changing the numbers of docs/findings.md.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(j 0 ${CLI} route --scan --format json)
string(REGEX MATCH "{\"type\":\"summary\"[^\n]*" summary "${j_out}")
file(READ ${SRC}/tests/data/route_scan_summary.json expected)
string(STRIP "${expected}" expected)
if(NOT summary STREQUAL expected)
  message(FATAL_ERROR "scan summary changed:\n  got      ${summary}\n  expected ${expected}")
endif()
expect_run(t 0 ${CLI} route --scan)
expect_match(t "${t_out}" "the N <= 128 fence does NOT cover every such shape")
expect_match(t "${t_out}" "\n  N=160: M=1..256 \\(all K\\)\n")
expect_match(t "${t_out}" "\nN=128 M=1..32 all K: file order 256x256/splitK \\(does not fit N\\); 1 possible winners: 256x256/splitK;")
expect_run(k 2 ${CLI} route --scan --k 100)
expect_match(k "${k_err}" "--k '100'")
