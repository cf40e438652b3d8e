# The option vocabulary (cli/options.h): every old spelling still works for one release, does
# what its replacement does, and says so in exactly one line on stderr (however often it is
# given); --help lists the new names only. Each old/new pair runs both ways and compares.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

# expect_old(CMD OLD NEW_TEXT): NAME_err holds exactly one deprecation line for --OLD.
function(expect_old name cmd old instead)
  set(want "a4w4check: ${cmd}: --${old} is deprecated, use ${instead}")
  string(REGEX MATCHALL "is deprecated" notes "${${name}_err}")
  list(LENGTH notes n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "${name}: ${n} deprecation lines, expected 1:\n${${name}_err}")
  endif()
  string(FIND "${${name}_err}" "${want}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${name}: no line '${want}' on stderr:\n${${name}_err}")
  endif()
endfunction()

# route --json = route --format json (given twice: still one line)
expect_run(rn 0 ${CLI} route --format json 1 512 4096 16 128 5120)
expect_run(ro 0 ${CLI} route --json --json 1 512 4096 16 128 5120)
expect_old(ro route json "--format json")
if(NOT ro_out STREQUAL rn_out OR NOT rn_out MATCHES "^{\"M\":1,")
  message(FATAL_ERROR "route --json printed otherwise than --format json:\n${ro_out}\n${rn_out}")
endif()
if(NOT rn_err STREQUAL "")
  message(FATAL_ERROR "route --format json wrote on stderr:\n${rn_err}")
endif()

# fingerprint --backend = --quantizer
expect_run(fn 0 ${CLI} fingerprint --quantizer ref --mode even)
expect_run(fo 0 ${CLI} fingerprint --backend ref --mode even)
expect_old(fo fingerprint backend "--quantizer")
if(NOT fo_out STREQUAL fn_out)
  message(FATAL_ERROR "fingerprint --backend printed otherwise than --quantizer")
endif()

# layers --backend = --pairs (the same refusal of a name that is not a pair)
expect_run(ln 2 ${CLI} layers --pairs nope --out ${WORK}/l)
expect_run(lo 2 ${CLI} layers --backend nope --out ${WORK}/l)
expect_old(lo layers backend "--pairs")
expect_match(lo "${lo_err}" "layers: --pairs 'nope' is not a backend pair")

# hazards --json = --format json: hazards.json written under --out
expect_run(hn 0 ${CLI} hazards --quick --backend cpu-asm --format json --out ${WORK}/hn --quiet)
expect_run(ho 0 ${CLI} hazards --quick --backend cpu-asm --json --out ${WORK}/ho --quiet)
expect_old(ho hazards json "--format json")
foreach(d hn ho)
  if(NOT EXISTS ${WORK}/${d}/hazards.json OR NOT EXISTS ${WORK}/${d}/results.json)
    message(FATAL_ERROR "hazards (${d}): hazards.json or results.json not written")
  endif()
endforeach()

# quant-parity --json = --format json
file(WRITE ${WORK}/s.csv "M,N,K\n1,256,512\n")
expect_run(qn 0 ${CLI} quant-parity --cases ${WORK}/s.csv --format json)
expect_run(qo 0 ${CLI} quant-parity --cases ${WORK}/s.csv --json)
expect_old(qo quant-parity json "--format json")
if(NOT qo_out STREQUAL qn_out)
  message(FATAL_ERROR "quant-parity --json printed otherwise than --format json")
endif()
# quant-parity --shapes FILE = --cases FILE (shapes from a file come by --cases everywhere)
expect_run(qs 0 ${CLI} quant-parity --shapes ${WORK}/s.csv --format json)
expect_old(qs quant-parity shapes "--cases")
if(NOT qs_out STREQUAL qn_out)
  message(FATAL_ERROR "quant-parity --shapes printed otherwise than --cases")
endif()

# known --out = --output (the same rule: it goes with --touch)
expect_run(kn 2 ${CLI} known --output ${WORK}/k.csv)
expect_run(ko 2 ${CLI} known --out ${WORK}/k.csv)
expect_old(ko known out "--output")
expect_match(ko "${ko_err}" "known: --output and --date go with --touch")

# report's options that did nothing: accepted, said to be ignored, once each
expect_run(p 0 ${CLI} report ${SRC}/tests/data/report_small_results.json --format md --out -
           --tuned x.csv --no-tuned --kernels k.csv --no-dispatch --no-dispatch)
foreach(o tuned no-tuned kernels no-dispatch)
  string(REGEX MATCHALL "a4w4check: report: --${o} is deprecated and ignored\n" l "${p_err}")
  list(LENGTH l n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "report --${o}: ${n} notes, expected 1:\n${p_err}")
  endif()
endforeach()

# --help: the new names, never the old ones (command, a new name, the old names)
foreach(row "route;--format F;--json" "hazards;--format F;--json" "quant-parity;--cases FILE;--json|--shapes"
        "layers;--pairs LIST;--json|--backend" "fingerprint;--quantizer X;--backend"
        "known;--output FILE;--out " "report;--format F;--tuned|--kernels|--no-dispatch")
  list(GET row 0 c)
  list(GET row 1 new)
  list(GET row 2 old)
  expect_run(h 0 ${CLI} ${c} --help)
  expect_match(h "${h_out}" "${new}")
  expect_no_match(h "${h_out}" "${old}")
endforeach()
