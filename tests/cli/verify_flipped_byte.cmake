# One flipped byte in y_exact: verify exits 1 and reports that tensor, that index, 1 mismatch.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
# g3 is M=33, N=256: element (5, 17) is byte 2*(5*256+17) = 2594 (its low byte)
expect_run(m 0 ${TOOLS}/mutate_bundle flip ${SRC}/cases/golden/g3_m33_n256_k768.safetensors
           ${WORK}/g3_flipped.safetensors y_exact 2594)
expect_match(m "${m_out}" "element \\(5, 17\\)")
expect_run(v 1 ${CLI} verify ${WORK}/g3_flipped.safetensors)
expect_match(v "${v_out}" "FAIL g3_flipped.safetensors y_exact \\(exact oracle\\): first mismatch at \\(5, 17\\): got 0x[0-9a-f]+ expected 0x[0-9a-f]+, 1 of 8448 mismatch")
# the other tensors still pass
expect_match(v "${v_out}" "PASS g3_flipped.safetensors y_ordered")
