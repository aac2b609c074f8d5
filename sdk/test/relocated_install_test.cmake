# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DLIBDIR=lib -P relocated_install_test.cmake
# Installs everything from BUILD_DIR into WORK_DIR/prefix, moves that prefix to WORK_DIR/moved,
# and checks that the moved install still works: its `plugrt` searches its own plugin directory
# and lists the plugins there, and a backend still builds against it with find_package(plugrt)
# and with pkg-config.
include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(first "${WORK_DIR}/prefix")
set(moved "${WORK_DIR}/moved")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${first}")

# No installed package file may name the prefix it was installed into, or the build.
file(GLOB_RECURSE package_files "${first}/${LIBDIR}/cmake/plugrt/*" "${first}/${LIBDIR}/pkgconfig/plugrt.pc")
if(NOT package_files)
  message(FATAL_ERROR "no CMake package or plugrt.pc under ${first}")
endif()
foreach(file IN LISTS package_files)
  file(READ "${file}" text)
  foreach(path "${first}" "${BUILD_DIR}")
    string(FIND "${text}" "${path}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names the absolute path ${path}: the install cannot be moved")
    endif()
  endforeach()
endforeach()

file(RENAME "${first}" "${moved}")
set(plugin_dir "${moved}/${LIBDIR}/plugrt/plugins")
if(NOT IS_DIRECTORY "${plugin_dir}")
  message(FATAL_ERROR "the install has no ${LIBDIR}/plugrt/plugins")
endif()
set(ENV{PLUGRT_PLUGIN_PATH} "")

# A backend built against the moved SDK with find_package(plugrt) alone, from the installed
# example, and installed into the moved prefix's plugin directory.
set(example "${moved}/share/plugrt/examples/elementwise")
run(${CMAKE_COMMAND} -S "${example}" -B "${WORK_DIR}/cmake_build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${moved}" "-DCMAKE_INSTALL_PREFIX=${moved}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/cmake_build")
run(${CMAKE_COMMAND} --install "${WORK_DIR}/cmake_build")

# `plugrt doctor` searches the moved prefix, and `plugrt backends` lists every plugin there.
run("${moved}/bin/plugrt" doctor)
string(FIND "${output}" "${plugin_dir}  (install)" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the moved plugrt does not search ${plugin_dir}:\n${output}")
endif()
run("${moved}/bin/plugrt" backends)
file(GLOB plugins "${plugin_dir}/libplugrt_*.so")
foreach(plugin IN LISTS plugins)
  string(FIND "${output}" "${plugin}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the moved plugrt does not list ${plugin}:\n${output}")
  endif()
endforeach()
string(REGEX MATCH "elementwise [^\n]* yes" listed "${output}")
if(NOT listed)
  message(FATAL_ERROR "the moved plugrt does not list the elementwise backend as available:\n${output}")
endif()

# The same backend with pkg-config and the compiler alone, checked by the moved contract kit.
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${moved}/${LIBDIR}/pkgconfig")
run(${PKG_CONFIG} --cflags --libs plugrt)
separate_arguments(cflags UNIX_COMMAND "${output}")
string(FIND "${output}" "${moved}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "pkg-config --cflags --libs plugrt does not point into the moved prefix: ${output}")
endif()
file(MAKE_DIRECTORY "${WORK_DIR}/pkg_config_build")
set(plugin "${WORK_DIR}/pkg_config_build/libplugrt_elementwise.so")
run(${CXX} -std=c++17 -O2 -shared -fPIC "${example}/src/elementwise_backend.cc" ${cflags} -o "${plugin}")
run("${moved}/bin/plugrt-contract-test" --plugin "${plugin}")
