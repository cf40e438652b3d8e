# coverage: `a4w4check coverage` lists, for the pre-merge set, every padded-M bucket of the
# shipped tuned tables, every tile_M / tile_N of the kernel table, each regime edge, the grids
# past 256 and 1,024 tiles and each CPU mutant's fault class, with the cases that exercise it;
# every item has one (exit 0). The buckets come from the tables given: a tuned table of one's
# own gives its own buckets, and a matrix missing a bucket's edge exits 1 naming it NONE.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

expect_run(p 0 ${CLI} coverage --all)
expect_match(p "${p_out}" "uncovered: 0 of [0-9]+ items")
expect_no_match(p "${p_out}" "NONE")
# the bucket the pre-merge set used to miss (64 < M <= 128), the cap past 8192 at N > 4096
expect_match(p "${p_out}" "bucket +M' 128 by getPaddedM gl 1: M 65\\.\\.128 \\[M == 65\\]: [0-9]+ cases?: [^\n]*b_m65_")
expect_match(p "${p_out}" "bucket +M' 8192 by getPaddedM gl 1: M 8193\\.\\.\\.\\.\\., N > 4096 \\[M == 8193, N > 4096\\]: [^\n]*g_m8193_n16384")
expect_match(p "${p_out}" "tile_M +tile_M 224 \\[M > 224, M % 224 == 1\\]: [^\n]*t_m225_")
expect_match(p "${p_out}" "tile_N +tile_N 1024 \\[N > 1024, 0 < N % 1024 <= 32\\]: ")
expect_match(p "${p_out}" "grid +output grid past 1024 tiles of 256x256 [^\n]*g_m8193_n16384")
expect_match(p "${p_out}" "edge +combined scale below fp32's subnormals [^\n]*r_m17_n32_k1024")
foreach(m mut-bf16-saturate mut-scale-f32-first mut-bucket-rows64 mut-persistent-skip mut-drop-kblock)
  expect_match(p "${p_out}" "fault +${m}: [^\n]*\\]: [0-9]+ cases?: ")
endforeach()

# a tuned table of its own: M 96 (a gl 0 value: 81..96), 100 (neither: itself), 4096 (gl 0 and
# gl 1); a matrix with M 81 and 100 only leaves the 4096 buckets and most else uncovered
file(WRITE ${WORK}/tuned.csv "cu_num,M,N,K,splitK,kernelName\n256,96,256,256,0,k\n256,100,256,256,0,k\n256,4096,256,256,0,k\n")
file(WRITE ${WORK}/few.csv "name,M,N,K,regime,seed,tags\nf81,81,256,256,exact,1,x\nf100,100,256,256,wide,2,x\n")
expect_run(f 1 ${CLI} coverage --cases ${WORK}/few.csv --tuned ${WORK}/tuned.csv)
expect_match(f "${f_out}" "bucket +M' 96 by getPaddedM gl 0: M 81\\.\\.96 \\[M == 81\\]: 1 case: f81")
expect_match(f "${f_out}" "bucket +M' 100 by M itself: M 100\\.\\.100 \\[M == 100\\]: 1 case: f100")
expect_match(f "${f_out}" "bucket +M' 4096 by getPaddedM gl 1: M 2049\\.\\.4096 \\[M == 2049\\]: NONE")
expect_match(f "${f_out}" "bucket +M' 4096 by getPaddedM gl 0: M 4033\\.\\.4096 \\[M == 4033\\]: NONE")
expect_match(f "${f_out}" "4 padded-M buckets of 1 tuned tables")
expect_no_match(f "${f_out}" "M' 128 ")

# bad input: one line naming the file, exit 2
expect_run(b1 2 ${CLI} coverage --cases ${WORK}/missing.csv)
expect_match(b1 "${b1_err}" "missing.csv")
file(WRITE ${WORK}/bad_tuned.csv "cu_num,M,N,K,splitK\n256,1,2,3,0\n")
expect_run(b2 2 ${CLI} coverage --tuned ${WORK}/bad_tuned.csv)
expect_match(b2 "${b2_err}" "bad_tuned.csv")
expect_run(b3 2 ${CLI} coverage --bogus)
