# run --contract B=FILE|TEXT (contracts §4.2): a backend judged by a tree contract, a contract
# file whose rules pick per shape (a shape without a rule is n/a with the reason), the override
# recorded in results.json (schema a4w4check-results/2) and shown in summary.md, and every bad
# use refused with one line and exit 2. hazards takes the option too.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
file(WRITE ${WORK}/c.csv "name,M,N,K,regime,seed,tags\n"
  "w1,8,64,1024,wide,3,x\nw2,5,48,512,wide,4,x\nt1,4,32,2080,tiny,5,x\n")
set(run ${CLI} run --cases ${WORK}/c.csv --no-golden --backend cpu-fallback --quiet)

# ordered(1) spelled as a tree: the same verdict, the tree's canonical text recorded
expect_run(r 0 ${run} --contract "cpu-fallback=tree(split=1,combine=chain)" --out ${WORK}/t)
file(READ ${WORK}/t/results.json js)
string(JSON schema GET "${js}" schema)
expect_match(schema "${schema}" "^a4w4check-results/2$")
string(JSON declared GET "${js}" contract_overrides cpu-fallback declared)
expect_match(declared "${declared}" "^ordered\\(1\\)$")
string(JSON inforce GET "${js}" contracts cpu-fallback)
expect_match(inforce "${inforce}" "^tree\\(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,combine=chain,final=rne\\)$")
expect_match(t "${js}" "\"contract\":[ \t]*\"tree\\(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,combine=chain,final=rne\\)\"")
file(READ ${WORK}/t/summary.md md)
expect_match(t "${md}" "## Contract overrides \\(run --contract\\)")
expect_match(t "${md}" "\\| cpu-fallback \\| tree\\(leaf=32,[^|]*\\) \\| text \\| ordered\\(1\\) \\|")

# another order: the kernel keeps ordered(1), so a final rounding toward zero fails, golden
# bundles included (a system under test judged by another contract than y_ordered's goes
# through the contract's oracle)
expect_run(r 1 ${CLI} run --cases ${WORK}/c.csv --golden ${SRC}/cases/golden --quiet
           --backend cpu-fallback --contract "cpu-fallback=tree(final=rz)" --out ${WORK}/rz)
file(READ ${WORK}/rz/results.json js)
expect_match(rz "${js}" "\"name\":[ \t]*\"golden/g1_m1_n256_k512\",[^}]*\"backend\":[ \t]*\"cpu-fallback\",[^}]*\"contract\":[ \t]*\"tree\\(leaf=32,[^}]*final=rz\\)\",[^}]*\"verdict\":[ \t]*\"fail\"")

# a contract file: rules per shape; K = 512 has no rule (skipped: INCOMPLETE, exit 5, never a pass)
file(WRITE ${WORK}/rules.txt "# cpu-fallback by shape\nwhen K>=1024: tree(split=1)\n"
  "when K%1024==32, M<=4 : ordered(1)   # t1\n")
expect_run(r 5 ${run} --contract "cpu-fallback=${WORK}/rules.txt" --out ${WORK}/f)
file(READ ${WORK}/f/results.json js)
expect_match(f "${js}" "contract ${WORK}/rules.txt has no rule for M=5 N=48 K=512")
string(JSON src GET "${js}" contract_overrides cpu-fallback source)
expect_match(f "${src}" "rules.txt$")
string(JSON rules GET "${js}" contracts cpu-fallback)
expect_match(f "${rules}" "^when K>=1024: tree\\(leaf=32[^\n]*\nwhen K%1024==32,M<=4: ordered\\(1\\)$")

# a plugin declaring a tree contract, and overridden by name (the name holds ':' and '/')
set(plugin ${TOOLS}/../plugins/liba4w4_tree_plugin.so)
expect_run(r 0 ${CLI} run --cases ${WORK}/c.csv --no-golden --backend plugin:${plugin} --quiet
           --out ${WORK}/p)
file(READ ${WORK}/p/results.json js)
expect_match(p "${js}" "\"contract\":[ \t]*\"tree\\(leaf=32,order=asc")
expect_run(r 0 ${CLI} run --cases ${WORK}/c.csv --no-golden --backend plugin:${plugin} --quiet
           --contract "plugin:${plugin}=ordered(1)" --out ${WORK}/p2)

# atomic(S) (contracts §4.1): cpu-fallback keeps ordered(1), which is atomic(1) except that a
# negative total that rounds to zero stays -0 where one atomic add into the zeroed +0 gives
# +0: the wide cases pass, the tiny one fails on its -0 outputs alone
expect_run(r 1 ${run} --contract "cpu-fallback=atomic(1)" --out ${WORK}/at)
file(READ ${WORK}/at/results.json js)
foreach(c w1 w2)
  expect_match(at "${js}" "\"name\":[ \t]*\"${c}\",[^}]*\"contract\":[ \t]*\"atomic\\(1\\)\",[^}]*\"verdict\":[ \t]*\"pass\"")
endforeach()
expect_match(at "${js}" "\"name\":[ \t]*\"t1\",[^}]*\"contract\":[ \t]*\"atomic\\(1\\)\",[^}]*\"verdict\":[ \t]*\"fail\"")
expect_match(at "${js}" "\"got\":[ \t]*\"0x8000\",[ \t\n]*\"expected\":[ \t]*\"0x0000\"")
if(js MATCHES "\"got\":[ \t]*\"0x[0-7][0-9a-f]*\",[ \t\n]*\"expected\"")
  message(FATAL_ERROR "atomic(1) on ordered(1): a mismatch other than -0 for +0")
endif()
string(JSON dep GET "${js}" contract_departures cpu-fallback)
expect_match(at "${dep}" "^adds bf16 split values in any order, judged against every order$")

# bad uses: one line, exit 2
expect_run(r 2 ${run} --contract "nope=exact" --out ${WORK}/x)
expect_match(r "${r_err}" "--contract 'nope=exact': must be B=FILE or B=TEXT with B one of the selected backends \\(cpu-fallback\\)")
expect_run(r 2 ${run} --contract "cpu-fallback=tree(leaf=3)" --out ${WORK}/x)
expect_match(r "${r_err}" "contract 'tree\\(leaf=3\\)': leaf=3: leaf is one of 1, 2, 4, 8, 16, 32")
expect_run(r 2 ${run} --contract "cpu-fallback=ordered(-1)" --out ${WORK}/x)
expect_match(r "${r_err}" "S of ordered\\(S\\) is a decimal 1..65536")
expect_run(r 2 ${run} --contract "cpu-fallback=atomic(7)" --out ${WORK}/x)
expect_match(r "${r_err}" "contract 'atomic\\(7\\)': S of atomic\\(S\\) is a decimal 1..6")
expect_run(r 2 ${run} --contract "cpu-fallback=exact" --contract "cpu-fallback=ordered(1)" --out ${WORK}/x)
expect_match(r "${r_err}" "--contract names backend cpu-fallback twice")
expect_run(r 2 ${run} --contract "cpu-fallback=${WORK}/none.txt" --out ${WORK}/x)
expect_match(r "${r_err}" "contract file ${WORK}/none.txt: cannot read")
file(WRITE ${WORK}/bad.txt "exact\nwhen K>=: exact\n")
expect_run(r 2 ${run} --contract "cpu-fallback=${WORK}/bad.txt" --out ${WORK}/x)
expect_match(r "${r_err}" "contract file ${WORK}/bad.txt: line 2: predicate 'K>='")
foreach(e r_err)
  string(REGEX MATCHALL "\n" nl "${${e}}")
  list(LENGTH nl n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "not one line: ${${e}}")
  endif()
endforeach()

# hazards takes --contract too: the kernel keeps ordered(1), a bf16 accumulator fails
expect_run(h 1 ${CLI} hazards --quick --k 256 --backend cpu-fallback --quiet --jobs 1
           --contract "cpu-fallback=tree(acc=bf16)" --out ${WORK}/h)
