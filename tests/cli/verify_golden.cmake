# verify on every golden bundle: every check PASS (or N/A where a layout does not exist), exit 0.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
file(GLOB bundles "${SRC}/cases/golden/*.safetensors")
list(LENGTH bundles n)
if(n LESS 6)
  message(FATAL_ERROR "expected the 6 golden bundles under cases/golden, found ${n}")
endif()
expect_run(v 0 ${CLI} verify ${bundles})
expect_no_match(v "${v_out}" "FAIL")
# every tensor the bundles hold is recomputed: 5 case bundles x (y_exact, y_ordered) ...
foreach(t "g1_m1_n256_k512.safetensors y_exact" "g2_m16_n1024_k5120.safetensors a_fp4 \\(round_up\\)"
          "g3_m33_n256_k768.safetensors w_scale_swizzled" "g4_m4_n128_k2048.safetensors cpu-asm vs y_ordered"
          "g5_m8_n48_k320.safetensors a_scale_shuffled" "q1_quant_modes.safetensors a_scale_even_shuffled"
          "q1_quant_modes.safetensors a_fp4_round_down_from_bf16")
  expect_match(v "${v_out}" "PASS ${t}")
endforeach()
expect_match(v "${v_out}" "N/A  g5_m8_n48_k320.safetensors w_scale_swizzled")
expect_match(v "${v_out}" "verify: 61 passed, 0 failed, 2 n/a")
