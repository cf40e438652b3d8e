# Malformed bundles: exit 2, one line naming the file and the rule, no crash.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
set(g1 ${SRC}/cases/golden/g1_m1_n256_k512.safetensors)

expect_run(t 0 ${TOOLS}/mutate_bundle truncate ${g1} ${WORK}/trunc.safetensors 5000)
expect_run(v 2 ${CLI} verify ${WORK}/trunc.safetensors)
expect_match(v "${v_err}" "trunc.safetensors: ")

expect_run(t 0 ${TOOLS}/mutate_bundle truncate ${g1} ${WORK}/tiny.safetensors 5)
expect_run(v 2 ${CLI} verify ${WORK}/tiny.safetensors)
expect_match(v "${v_err}" "tiny.safetensors")

expect_run(t 0 ${TOOLS}/mutate_bundle lie-offset ${g1} ${WORK}/lie.safetensors w_fp4)
expect_run(v 2 ${CLI} verify ${WORK}/lie.safetensors)
expect_match(v "${v_err}" "lie.safetensors: .*w_fp4")

expect_run(t 0 ${TOOLS}/mutate_bundle drop ${g1} ${WORK}/drop.safetensors w_scale_swizzled)
expect_run(v 2 ${CLI} verify ${WORK}/drop.safetensors)
expect_match(v "${v_err}" "w_scale_swizzled.*promised")

expect_run(t 0 ${TOOLS}/mutate_bundle drop ${g1} ${WORK}/noy.safetensors y_ordered)
expect_run(v 2 ${CLI} verify ${WORK}/noy.safetensors)
expect_match(v "${v_err}" "y_ordered.*missing")

# an output bundle (a kernel's y, as run --keep-outputs and the external runner write them) is
# refused naming what judges it, not only the formats verify takes
expect_run(r 0 ${CLI} run --set edge --no-golden --case e_k32 --backend cpu-fallback --quiet
           --keep-outputs ${WORK}/kept --out ${WORK}/keptrun)
expect_run(v 2 ${CLI} verify ${WORK}/kept/cpu-fallback/e_k32.safetensors)
expect_match(v "${v_err}" "e_k32.safetensors: an output bundle .*run --backend bundle:DIR")

expect_run(v 2 ${CLI} verify ${WORK}/does_not_exist.safetensors)
expect_run(v 2 ${CLI} verify)
expect_run(v 2 ${CLI} no-such-command)
# one line each
string(REGEX MATCHALL "\n" nl "${v_err}")
list(LENGTH nl lines)
if(NOT lines EQUAL 1)
  message(FATAL_ERROR "expected a one-line error, got:\n${v_err}")
endif()
