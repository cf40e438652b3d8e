# route --cases reads the project's case files, whose '#' comment lines must be skipped
# (regression: a4w4_shapelist_load took the first comment line as the header).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake.inc)
expect_run(r 0 ${CLI} route --cases ${SRC}/cases/edge.csv)
string(REGEX MATCHALL "\nM=[0-9]+ N=[0-9]+ K=[0-9]+:" hits "\n${r_out}")
list(LENGTH hits n)
file(STRINGS ${SRC}/cases/edge.csv rows REGEX "^e_")
list(LENGTH rows want)
if(NOT n EQUAL want)
  message(FATAL_ERROR "route --cases cases/edge.csv routed ${n} shapes, the file has ${want}")
endif()
