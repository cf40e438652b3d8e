# Option values are taken strictly, the same way by every option (harness/cli/options.c):
#   `run --out=` exited 4 (mkdir '') where an empty value is bad usage (2);
#   `--timeout ' 5'`, `--timeout +5`, `--budget-seconds 05` were accepted while `--shard ' 1/2'`
#   was refused: one integer rule now (digits, an optional '-', no '+', space or leading zero);
#   `--backend 'cpu-asm,,cpu-fallback'` was accepted (the empty item skipped);
#   `export --max-bytes 5M` wrote 10.6 MB (golden bundles were left out of its estimate).
# Reproducers: the commands below, each on the unfixed binary.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
file(WRITE ${WORK}/c.csv "name,M,N,K,regime,seed,tags\nt1,4,32,64,normal,1,\n")

# an empty value: exit 2, one line naming the option, nothing created
expect_run(o 2 ${CLI} run --cases ${WORK}/c.csv --no-golden --out= --quiet)
expect_match(o "${o_err}" "^a4w4check: run: option --out needs a value, got an empty one\n$")
expect_run(o 2 ${CLI} compare --out= a.json b.json)
expect_match(o "${o_err}" "option --out needs a value, got an empty one")

# one integer rule for every integer option
foreach(v " 5" "+5" "05" "5 " "-0" "0x5")
  string(REGEX REPLACE "([+])" "[+]" re "${v}")
  foreach(opt timeout budget-seconds max-timeouts)
    expect_run(i 2 ${CLI} run --cases ${WORK}/c.csv --no-golden --out ${WORK}/o --${opt} "${v}")
    expect_match(i "${i_err}" "--${opt} '${re}' is not an integer in")
  endforeach()
  expect_run(s 2 ${CLI} run --cases ${WORK}/c.csv --no-golden --shard "${v}/2")
  expect_match(s "${s_err}" "--shard '${re}/2' must be i/n")
  expect_run(h 2 ${CLI} hazards --jobs "${v}")
  expect_run(r 2 ${CLI} route "${v}" 64 128)
  expect_match(r "${r_err}" "shape 1 M '${re}' is not an integer")
endforeach()
expect_run(k 2 ${CLI} route --scan --k "64, 128")
expect_run(k 2 ${CLI} bench --shapes "+4,32,64")
expect_run(k 0 ${CLI} route --log2-k-split -1 16 64 256)

# a list with an empty item is refused, not shortened
foreach(list "cpu-asm,,cpu-fallback" ",cpu-asm" "cpu-asm,")
  expect_run(l 2 ${CLI} run --cases ${WORK}/c.csv --no-golden --out ${WORK}/l --backend "${list}")
  expect_match(l "${l_err}" "--backend '${list}' has an empty item")
endforeach()
if(EXISTS ${WORK}/l)
  message(FATAL_ERROR "a refused --backend list still created ${WORK}/l")
endif()

# export --max-bytes counts the golden bundles: the estimate is what the export writes
file(MAKE_DIRECTORY ${WORK}/golden)
file(COPY ${SRC}/cases/golden/g2_m16_n1024_k5120.safetensors DESTINATION ${WORK}/golden)
expect_run(x 2 ${CLI} export --cases ${WORK}/c.csv --golden ${WORK}/golden --max-bytes 1M
           --out ${WORK}/ops --quiet)
string(REGEX MATCH "the export would take ([0-9]+) bytes" m "${x_err}")
set(estimate "${CMAKE_MATCH_1}")
if(NOT estimate)
  message(FATAL_ERROR "export over --max-bytes: no estimate in '${x_err}'")
endif()
if(EXISTS ${WORK}/ops)
  message(FATAL_ERROR "export over --max-bytes wrote ${WORK}/ops")
endif()
expect_run(x 0 ${CLI} export --cases ${WORK}/c.csv --golden ${WORK}/golden --out ${WORK}/ops --quiet)
file(READ ${WORK}/ops/manifest.json manifest)
string(REGEX MATCH "\"bytes\":[ \t]*([0-9]+)" m "${manifest}")
if(NOT CMAKE_MATCH_1 EQUAL estimate)
  message(FATAL_ERROR "export wrote ${CMAKE_MATCH_1} bytes of tensors, its --max-bytes estimate was ${estimate}")
endif()
expect_run(x 0 ${CLI} export --cases ${WORK}/c.csv --golden ${WORK}/golden --max-bytes ${estimate}
           --out ${WORK}/ops2 --quiet)
