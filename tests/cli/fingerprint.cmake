# fingerprint: the ref quantizer in each scale mode is named as that mode with RNE (exit 0);
# a wrong-mode mutant is named as the mode it really uses, truncation and swapped nibbles are
# named (exit 1); a backend that is no quantizer is bad usage (exit 2).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)

foreach(m round_up round_down ceil even)
  expect_run(r 0 ${CLI} fingerprint --quantizer ref --mode ${m})
  expect_match(r "${r_out}" "^fingerprint ref-quant asked ${m}: ${m} \\+ RNE \\(as asked\\)\n$")
endforeach()
expect_run(all 0 ${CLI} fingerprint --quantizer ref)
expect_match(all "${all_out}" "asked round_up: round_up \\+ RNE[^\n]*\n[^\n]*asked round_down: round_down \\+ RNE[^\n]*\n[^\n]*asked ceil: ceil \\+ RNE[^\n]*\n[^\n]*asked even: even \\+ RNE")

foreach(pair "mut-mode-round_up;round_up;ceil" "mut-mode-round_down;round_down;round_up"
             "mut-mode-ceil;ceil;round_down" "mut-mode-even;even;round_down")
  list(GET pair 0 b)
  list(GET pair 1 asked)
  list(GET pair 2 actual)
  expect_run(w 1 ${CLI} fingerprint --quantizer ${b} --mode ${asked})
  expect_match(w "${w_out}" "asked ${asked}: ${actual} \\+ RNE \\(differs")
endforeach()
expect_run(t 1 ${CLI} fingerprint --quantizer mut-e2m1-trunc --mode even)
expect_match(t "${t_out}" "asked even: even \\+ truncation")
expect_run(n 1 ${CLI} fingerprint --quantizer mut-nibble-swap --mode round_up)
expect_match(n "${n_out}" "round_up \\+ RNE, nibbles swapped")

expect_run(b 2 ${CLI} fingerprint --quantizer cpu-asm)
expect_match(b "${b_err}" "'cpu-asm' is not a quantizer")
expect_run(b2 2 ${CLI} fingerprint --quantizer ref --mode floor)
expect_match(b2 "${b2_err}" "--mode 'floor' is not a scale mode")
expect_run(b3 2 ${CLI} fingerprint)
