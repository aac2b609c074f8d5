# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=... -DWORK_DIR=... -DLIBDIR=lib -DPLUGRT_COMMAND=... -DSOURCE_DIR=...
#       -P slow_backend_placement_test.cmake
# A backend much slower than oneDNN, built out of tree as a vendor would (the installed SDK
# and `pkg-config --cflags --libs plugrt` alone: test/plugins/naive_plugin.cc, backend
# "blas", which takes MatMul, Gemm, Conv and element-wise ops), dropped into a directory of
# PLUGRT_PLUGIN_PATH. With no cost profile and an empty cache, `plugrt run --placement
# auto` on programs compiled for portable (an MLP and a CNN) must measure the nodes the new
# backend contests, give it none of them, and say in the load report what it measured.
# (The latency against oneDNN alone is measured by bench/slow_plugin_placement.py.)
include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component sdk)
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
run(${PKG_CONFIG} --cflags --libs plugrt)
separate_arguments(flags UNIX_COMMAND "${output}")
set(plugins "${WORK_DIR}/plugins")
file(MAKE_DIRECTORY "${plugins}")
run(${CXX} -std=c++17 -O2 -shared -fPIC "${SOURCE_DIR}/test/plugins/naive_plugin.cc" ${flags}
    -o "${plugins}/libplugrt_naive_blas.so")

set(ENV{PLUGRT_PLUGIN_PATH} "${plugins}")
set(ENV{PLUGRT_CACHE_DIR} "${WORK_DIR}/cache")  # no profile, no cached placement
run("${PLUGRT_COMMAND}" backends)
if(NOT output MATCHES "blas +naive_blas [^\n]* yes")
  message(FATAL_ERROR "plugrt backends does not list the out-of-tree backend as available:\n${output}")
endif()
foreach(model mlp tiny_cnn)
  set(program "${WORK_DIR}/${model}.prt")
  run("${PLUGRT_COMMAND}" compile "${SOURCE_DIR}/models/${model}.onnx" -o "${program}" --backends portable)
  run("${PLUGRT_COMMAND}" run "${program}" --placement auto --json)
  string(JSON measured GET "${output}" placement_measured)
  if(NOT measured MATCHES " on blas [0-9.]+ us")
    message(FATAL_ERROR "${model}: the first load did not report measuring blas: '${measured}'")
  endif()
  string(JSON parts LENGTH "${output}" placement)
  math(EXPR last "${parts} - 1")
  foreach(i RANGE ${last})
    string(JSON backend GET "${output}" placement ${i} backend)
    if(backend STREQUAL "blas")
      message(FATAL_ERROR "${model}: partition ${i} was placed on the slow backend:\n${output}")
    endif()
  endforeach()
  message(STATUS "${model}: ${parts} partition(s), none on blas; ${measured}")
endforeach()
