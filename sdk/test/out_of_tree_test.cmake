# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DPLUGRT_COMMAND=... -P out_of_tree_test.cmake
# Installs the SDK (component sdk) from BUILD_DIR into WORK_DIR/prefix, builds the backend in EXAMPLE_DIR
# against it with find_package(plugrt) alone, runs the installed contract kit on it, and
# installs it into a second prefix to check it lands in the plugin directory.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "ok: ${ARGN}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component sdk)
foreach(file include/plugrt/plugrt_abi.h include/plugrt/sdk/backend.h include/plugrt/common/dim_expr.h
             include/plugrt/schema/graph_ir_generated.h
             lib/cmake/plugrt/plugrtConfig.cmake lib/pkgconfig/plugrt.pc bin/plugrt-contract-test
             include/plugrt/sdk/testing/mock_host.h share/doc/plugrt/sdk/README.md
             share/doc/plugrt/sdk/docs/reading_blobs.md share/plugrt/examples/elementwise/CMakeLists.txt
             share/plugrt/examples/elementwise/src/elementwise_backend.cc)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the SDK install lacks ${file}")
  endif()
endforeach()
run(${CMAKE_COMMAND} -S "${EXAMPLE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/vendor"
    "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${prefix}/bin/plugrt-contract-test" --plugin "${WORK_DIR}/build/libplugrt_elementwise.so")
run(${CMAKE_COMMAND} --install "${WORK_DIR}/build")
if(NOT EXISTS "${WORK_DIR}/vendor/lib/plugrt/plugins/libplugrt_elementwise.so")
  message(FATAL_ERROR "plugrt_add_backend() did not install the plugin into lib/plugrt/plugins")
endif()
# pkg-config finds the headers too.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
  run(${PKG_CONFIG} --cflags plugrt)
endif()

# `plugrt new-backend` writes a folder that builds against the installed SDK and passes
# the contract kit (its own ctest) as generated.
run("${PLUGRT_COMMAND}" new-backend demo_npu --out "${WORK_DIR}/demo_npu")
foreach(file CMakeLists.txt src/demo_npu_backend.cc README.md setup.md COMPATIBILITY.md third-party/README.md
             test/CMakeLists.txt)
  if(NOT EXISTS "${WORK_DIR}/demo_npu/${file}")
    message(FATAL_ERROR "plugrt new-backend did not write ${file}")
  endif()
endforeach()
file(READ "${WORK_DIR}/demo_npu/COMPATIBILITY.md" compatibility)
if(NOT compatibility MATCHES "What the generated code does.*Relu")
  message(FATAL_ERROR "the generated COMPATIBILITY.md does not say what the generated code does")
endif()
run(${CMAKE_COMMAND} -S "${WORK_DIR}/demo_npu" -B "${WORK_DIR}/demo_npu/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror")
file(STRINGS "${WORK_DIR}/demo_npu/build/CMakeCache.txt" build_type REGEX "^CMAKE_BUILD_TYPE:")
if(NOT build_type STREQUAL "CMAKE_BUILD_TYPE:STRING=Release")
  message(FATAL_ERROR "the generated backend does not default to a Release build: ${build_type}")
endif()
run(${CMAKE_COMMAND} --build "${WORK_DIR}/demo_npu/build")
run(${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/demo_npu/build" --output-on-failure)
