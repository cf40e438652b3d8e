# The shared option vocabulary (docs/cli/README.md) and the version.
# `a4w4check --version` and `a4w4check version` print the version of its one source,
# python/a4w4check/__init__.py, exit 0. --quiet means one thing: no progress and no
# "wrote FILE" lines on stderr, stdout unchanged; what an old --quiet did beyond that has its
# own option (layers --failures-only, discover --no-evidence).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

# --- the version, from python/a4w4check/__init__.py
file(STRINGS ${SRC}/python/a4w4check/__init__.py vline REGEX "^__version__ = ")
string(REGEX REPLACE "^__version__ = \"(.*)\"$" "\\1" version "${vline}")
if(NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
  message(FATAL_ERROR "no __version__ in python/a4w4check/__init__.py: '${vline}'")
endif()
foreach(form --version version)
  expect_run(v 0 ${CLI} ${form})
  if(NOT v_out STREQUAL "a4w4check ${version}\n" OR NOT v_err STREQUAL "")
    message(FATAL_ERROR "a4w4check ${form}: stdout '${v_out}' stderr '${v_err}', expected "
                        "'a4w4check ${version}'")
  endif()
endforeach()
expect_run(h 0 ${CLI} --help)
expect_match(h "${h_out}" "'a4w4check --version'")

# --- one --quiet help line in every command aligned to the vocabulary
foreach(cmd compare discover export hazards layers report run selftest)
  expect_run(q 0 ${CLI} ${cmd} --help)
  expect_match(q "${q_out}" "\n  --quiet +no progress and no \"wrote FILE\" lines on stderr\n")
endforeach()

# --- layers: --quiet leaves stdout as it is (drops only the skip notices); --failures-only
# drops the passing lines
expect_run(l0 0 ${CLI} layers --qwen-n 256 --out ${WORK}/l)
expect_run(l 0 ${CLI} layers --qwen-n 256 --out ${WORK}/l --quiet)
string(REGEX REPLACE ", [0-9.]+ s\\)" ")" l0_out "${l0_out}")
string(REGEX REPLACE ", [0-9.]+ s\\)" ")" l_out "${l_out}")
if(NOT l_out STREQUAL l0_out)
  message(FATAL_ERROR "layers --quiet changed stdout:\n${l0_out}\n---\n${l_out}")
endif()
expect_match(l "${l_out}" "\nPASS cpu on_gfx950_n256_k256_2d_nobias: asm/asm_quantize; ")
expect_match(l "${l_out}" "layers: 360 passed, 0 failed")
expect_no_match(l "${l_err}" "notice:")
expect_run(f 0 ${CLI} layers --qwen-n 256 --out ${WORK}/l --quiet --failures-only)
expect_no_match(f "${f_out}" "PASS cpu ")
expect_match(f "${f_out}" "layers: 360 passed, 0 failed")

# --- discover: --quiet keeps the evidence on stdout and drops the round progress;
# --no-evidence keeps it in its file only
expect_run(d 0 ${CLI} discover --backend cpu-fallback --shapes 8x64x512 --repeats 1
  --out ${WORK}/d.txt)
expect_match(d "${d_err}" "discover: round 1: ")
expect_match(d "${d_out}" "\n- tree over the 16 blocks")
expect_run(dq 0 ${CLI} discover --backend cpu-fallback --shapes 8x64x512 --repeats 1
  --out ${WORK}/dq.txt --quiet)
if(NOT dq_err STREQUAL "")
  message(FATAL_ERROR "discover --quiet: stderr not empty:\n${dq_err}")
endif()
expect_match(dq "${dq_out}" "\n- tree over the 16 blocks")
expect_run(dn 0 ${CLI} discover --backend cpu-fallback --shapes 8x64x512 --repeats 1
  --out ${WORK}/dn.txt --quiet --no-evidence)
expect_no_match(dn "${dn_out}" "tree over")
expect_match(dn "${dn_out}" "discover: cpu-fallback at 8x64x512: ordered\\(1\\)")
file(READ ${WORK}/dn.txt.evidence.md ev)
expect_match(dn "${ev}" "- tree over the 16 blocks")

# --- report and compare: --quiet drops the "wrote" lines; compare's totals line stays
set(base ${SRC}/tests/data/report_compare_base.json)
set(cand ${SRC}/tests/data/report_compare_cand.json)
expect_run(r 0 ${CLI} report ${base} --format md --out ${WORK}/r)
expect_match(r "${r_err}" "a4w4check report: wrote ")
expect_run(rq 0 ${CLI} report ${base} --format md --out ${WORK}/rq --quiet)
if(NOT rq_err STREQUAL "" OR NOT EXISTS ${WORK}/rq/summary.md)
  message(FATAL_ERROR "report --quiet: stderr '${rq_err}', or no summary.md")
endif()
expect_run(c 1 ${CLI} compare ${base} ${cand} --format md --out ${WORK}/c --quiet)
expect_no_match(c "${c_err}" "wrote")
expect_match(c "${c_err}" "a4w4check compare: [0-9]+ new failures, [0-9]+ fixed")

# --- selftest: --quiet is accepted and leaves stdout as it is
file(WRITE ${WORK}/st.csv "name,M,N,K,regime,seed,tags\nw_m4_n32_k1024,4,32,1024,normal:ceil,1,x\n")
expect_run(s 1 ${CLI} selftest --cases ${WORK}/st.csv --only mut-zero-sign --verbose)
expect_run(sq 1 ${CLI} selftest --cases ${WORK}/st.csv --only mut-zero-sign --verbose --quiet)
string(REGEX REPLACE "; [0-9.]+ s\n" "\n" s_out "${s_out}")
string(REGEX REPLACE "; [0-9.]+ s\n" "\n" sq_out "${sq_out}")
if(NOT s_out STREQUAL sq_out OR NOT sq_err STREQUAL "")
  message(FATAL_ERROR "selftest --quiet changed stdout or wrote stderr:\n${s_out}\n---\n${sq_out}\n${sq_err}")
endif()
expect_match(s "${s_out}" "\n  w_m4_n32_k1024 +mut-zero-sign ")
