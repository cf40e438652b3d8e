# Regressions from a reviewer's bad-input pass: each must exit with its code and write nothing.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
# --shard values past 32 bits used to wrap around silently
expect_run(r 2 ${CLI} run --set edge --shard 4294967297/4294967298 --out ${WORK}/s1 --quiet)
expect_match(r "${r_err}" "must be i/n")
expect_run(r 2 ${CLI} run --set edge --shard 0/3 --out ${WORK}/s2 --quiet)
expect_run(r 2 ${CLI} run --set edge --shard 3/2 --out ${WORK}/s3 --quiet)
# --resume used to overwrite a results.jsonl that is not ours
file(MAKE_DIRECTORY ${WORK}/g)
file(WRITE ${WORK}/g/results.jsonl "not json\n")
expect_run(r 2 ${CLI} run --set edge --no-golden --out ${WORK}/g --resume --quiet)
expect_match(r "${r_err}" "not an a4w4check results header")
file(READ ${WORK}/g/results.jsonl kept)
if(NOT kept STREQUAL "not json\n")
  message(FATAL_ERROR "--resume overwrote a file it could not read")
endif()
# a backend named twice used to run twice
expect_run(r 2 ${CLI} run --set edge --no-golden --backend cpu-asm,cpu-asm --out ${WORK}/d --quiet)
expect_match(r "${r_err}" "twice")
# a shape this machine cannot generate used to exit 4 after writing a header-only results.jsonl
file(WRITE ${WORK}/huge.csv "name,M,N,K,regime,seed,tags\nhugem,1000000000,32,256,normal,1,x\n")
expect_run(r 2 ${CLI} run --cases ${WORK}/huge.csv --out ${WORK}/h --quiet)
expect_match(r "${r_err}" "huge.csv:2: case hugem: .*shape rule")
if(EXISTS ${WORK}/h)
  message(FATAL_ERROR "a rejected case file left ${WORK}/h behind")
endif()
# a GPU backend on a machine without one (or a build without GPU support): exit 3, one line
expect_run(r 3 ${CLI} run --set edge --backend hip-asm-32x128 --out ${WORK}/nogpu --quiet)
expect_match(r "${r_err}" "hip-asm-32x128")
expect_run(r 3 ${CLI} layers --pairs hip --quiet)
# case names become file names (bundle:DIR): no path separators; an empty matrix is an error;
# a UTF-8 byte order mark before the header is accepted
file(WRITE ${WORK}/evil.csv "name,M,N,K,regime,seed,tags\n../../etc/evil,1,32,64,exact,1,\n")
expect_run(r 2 ${CLI} run --cases ${WORK}/evil.csv --no-golden --out ${WORK}/e --quiet)
expect_match(r "${r_err}" "evil.csv:2: column 1 \\(name\\)")
file(WRITE ${WORK}/empty.csv "name,M,N,K,regime,seed,tags\n")
expect_run(r 2 ${CLI} run --cases ${WORK}/empty.csv --no-golden --out ${WORK}/e2 --quiet)
expect_match(r "${r_err}" "no cases")
string(ASCII 239 187 191 bom)
file(WRITE ${WORK}/bom.csv "${bom}name,M,N,K,regime,seed,tags\nb1,1,32,64,exact,1,\n")
# (cpu-fallback only: cpu-asm has no ASM layout at K=64, so the default backends would leave
# the run INCOMPLETE, exit 5)
expect_run(r 0 ${CLI} run --cases ${WORK}/bom.csv --no-golden --backend cpu-fallback --out ${WORK}/b --quiet)
