# bench: in one run per shape the plain and fast oracles, sgemm on one thread and on all, the
# CPU systems under test, then the ratios and the instruction-set path; per-shape regimes.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(r 0 ${CLI} bench --shapes "16,256,512\;8,64,256:wide" --reps 1)
foreach(re "fast oracles: path [a-z0-9]+"
           "16x256x512 +plain exact oracle \\(1 thread\\) +[0-9.]+ +[0-9.]+ +[0-9.]+\n"
           "\\(normal\\) +fast exact oracle \\(1 thread\\) .*\\[[a-z0-9]+, window"
           "fast exact oracle \\([0-9]+ threads\\)" "fast ordered\\(1\\) oracle \\(1 thread\\)"
           "OpenBLAS sgemm \\([0-9]+ threads\\)" "OpenBLAS sgemm \\(1 thread\\)"
           "backend cpu-asm \\[ordered\\(1\\)\\]" "backend cpu-fallback \\[ordered\\(1\\)\\]"
           "ratios: fast exact / sgemm \\(1 thread each\\) x[0-9.]+; fast exact [0-9]+ / 1 threads x"
           "8x64x256 .*\n\\(wide\\) ")
  expect_match(bench "${r_out}" "${re}")
endforeach()
# the default shapes are the ones quoted in docs/benchmarks.md; --backends-only times only backends
expect_run(r 0 ${CLI} bench --help)
expect_match(help "${r_out}" "256,5120,5120\;16,34816,5120\;256,5120,5120:wide")
expect_run(r 0 ${CLI} bench --shapes 4,64,256 --reps 1 --backends-only --backend cpu-fallback)
expect_no_match(only "${r_out}" "oracle \\(|sgemm \\(|ratios:|fast oracles")
expect_match(only "${r_out}" "4x64x256 +backend cpu-fallback")
# a regime bench cannot generate, a bad shape: exit 2 with one line
expect_run(r 2 ${CLI} bench --shapes "16,256,512:special")
expect_match(special "${r_err}" "regime 'special'")
expect_run(r 2 ${CLI} bench --shapes "16,256")
expect_match(shape "${r_err}" "not M,N,K")
# --tree: the fast and the plain tree oracle (the plain one on its first rows), their ratio;
# a text that is not a tree contract: exit 2 naming it
expect_run(r 0 ${CLI} bench --shapes 4,32,256 --reps 1 --backend cpu-fallback
           --tree "tree(leaf=1,fuse=16,prec=26,round=rz)")
expect_match(tree "${r_out}" "fast tree oracle \\(1 thread\\) tree\\(leaf=1,order=asc,fuse=16,reduce=chain,prec=26,round=rz,acc=fp32,split=1,combine=chain,final=rne\\) +[0-9.]+ +[0-9.]+ +[0-9.]+  \\[[a-z0-9]+, 128 of 128 outputs by the tree reducer\\]")
expect_match(tree "${r_out}" "plain tree oracle \\(1 thread\\) tree\\(leaf=1,[^)]*\\) +[0-9.]+")
expect_match(tree "${r_out}" "ratios: fast / plain tree \\(1 thread each\\) x[0-9.]+")
expect_run(r 2 ${CLI} bench --shapes 4,32,256 --tree "ordered(2)")
expect_match(tree_bad "${r_err}" "--tree 'ordered\\(2\\)': not a tree contract")
expect_run(r 2 ${CLI} bench --shapes 4,32,256 --tree "tree(prec=7)")
expect_match(tree_bad "${r_err}" "--tree 'tree\\(prec=7\\)': .*prec=7")
# --bounded S: the fast and the plain bounded(S) limits on the same first rows, their ratio;
# S outside 1..65536: exit 2
expect_run(r 0 ${CLI} bench --shapes 4,32,256 --reps 1 --backend cpu-fallback --bounded 4)
expect_match(bounded "${r_out}" "fast bounded\\(4\\) limits \\(1 thread\\) +[0-9.]+ +[0-9.]+ +[0-9.]+\n")
expect_match(bounded "${r_out}" "plain bounded\\(4\\) limits \\(1 thread\\) +[0-9.]+")
expect_match(bounded "${r_out}" "ratios: fast / plain bounded limits \\(1 thread each\\) x[0-9.]+")
expect_run(r 2 ${CLI} bench --shapes 4,32,256 --bounded 0)
expect_match(bounded_bad "${r_err}" "--bounded")
# --isa forces the fast oracles' path (portable runs everywhere): the preamble and every fast
# line name it; a name that is not a path: exit 2 naming the paths this build and CPU run
expect_run(r 0 ${CLI} bench --shapes 4,64,256 --reps 1 --backend cpu-fallback --isa portable)
expect_match(isa "${r_out}" "fast oracles: path portable \\(forced by --isa; the best this build and CPU run: [a-z0-9]+\\)")
expect_match(isa "${r_out}" "fast exact oracle \\(1 thread\\) .*\\[portable, window")
expect_match(isa "${r_out}" "fast ordered\\(1\\) oracle \\(1 thread\\) .*\\[portable\\]")
expect_no_match(isa "${r_out}" "\\[(amx|avx512vnni|avxvnni|avx2)")
expect_run(r 2 ${CLI} bench --shapes 4,64,256 --isa sse2)
expect_match(isa_bad "${r_err}" "bench: --isa 'sse2': not an instruction-set path \\(this build and CPU run: auto, .*portable\\)")
# --clock thread: the thread CPU clock named in the timing line; the methods on more than one
# thread n/a, the one-thread ones timed; a clock that is not wall or thread: exit 2
expect_run(r 0 ${CLI} bench --shapes 4,64,256 --reps 1 --backend cpu-fallback --clock thread)
expect_match(clock "${r_out}" "timing: median \\(and min\\) thread CPU time, CLOCK_THREAD_CPUTIME_ID,")
expect_match(clock "${r_out}" "fast exact oracle \\(1 thread\\) +[0-9.]+ +[0-9.]+ +[0-9.]+")
expect_match(clock "${r_out}" "fast exact oracle \\([0-9]+ threads\\) +n/a: more than one thread")
expect_match(clock "${r_out}" "OpenBLAS sgemm \\(1 thread\\) +[0-9.]+")
expect_match(clock "${r_out}" "fast ordered\\(1\\) / sgemm \\(1 thread each\\) x[0-9.]+")
expect_run(r 2 ${CLI} bench --shapes 4,64,256 --clock cpu)
expect_match(clock_bad "${r_err}" "--clock")
