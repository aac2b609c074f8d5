# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DLIBDIR=lib -DPLUGRT_COMMAND=... -DPYTHON=...
#       -DSOURCE_DIR=... -P vendor_install_test.cmake
# Everything a vendor needs is installed and true: installs the SDK (component sdk) of
# BUILD_DIR into WORK_DIR/prefix, with the `plugrt` command beside it, and checks that
#   - every file path the installed docs name exists in the install (or, for the files
#     `plugrt new-backend` writes, in a generated backend), and no installed file names a
#     file of plugrt's source tree;
#   - a generated backend builds against the install with CMake, passes the kit, and a plain
#     `cmake --install` puts it into that plugrt's plugin directory, where `plugrt backends`
#     finds it;
#   - both installed examples and the generated backend build with CMake and with pkg-config
#     alone (`--cflags --libs`), and pass the kit;
#   - the scale_shift example runs a model whose dimension varies and names its constants.
include("${CMAKE_CURRENT_LIST_DIR}/script_helpers.cmake")

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component sdk)
# The command as installed (it finds the plugin directory from its own location).
file(COPY "${PLUGRT_COMMAND}" DESTINATION "${prefix}/bin")
set(ENV{PLUGRT_PLUGIN_PATH} "")
set(ENV{PLUGRT_CACHE_DIR} "${WORK_DIR}/cache")
set(kit "${prefix}/bin/plugrt-contract-test")
set(generated "${WORK_DIR}/my_npu")
run("${prefix}/bin/plugrt" new-backend my_npu --out "${generated}")

# ---- Every path an installed doc names is installed ---------------------------------------
# A path is a `quoted` or linked token with a slash and no spaces or placeholders; it is
# looked up next to the doc, under the prefix, under include/, next to the SDK's README and
# in the generated backend (whose files the README lists).
function(check_doc_paths doc)
  file(READ "${doc}" text)
  # The changelog's test notes name plugrt's source tree, as the page says.
  string(REGEX REPLACE "Tests \\(in plugrt's source tree\\):[^\n]*(\n  [^\n]*)*" "" text "${text}")
  string(REGEX REPLACE "\\]\\(([^)\n]+)\\)" " `\\1` " text "${text}")
  string(REGEX REPLACE "[][;]" " " text "${text}")
  string(REGEX MATCHALL "`[^`\n]+`" tokens "${text}")
  get_filename_component(dir "${doc}" DIRECTORY)
  set(missing "")
  foreach(token IN LISTS tokens)
    string(REGEX REPLACE "^`(.*)`$" "\\1" path "${token}")
    string(REGEX REPLACE "#.*$" "" path "${path}")
    if(NOT path MATCHES "/" OR NOT path MATCHES "^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$")
      continue()
    endif()
    set(found OFF)
    foreach(base "${dir}" "${prefix}" "${prefix}/include" "${prefix}/share/doc/plugrt/sdk" "${generated}")
      if(EXISTS "${base}/${path}")
        set(found ON)
      endif()
    endforeach()
    if(NOT found)
      string(APPEND missing "\n  ${doc}: ${path}")
    endif()
  endforeach()
  set(missing_paths "${missing_paths}${missing}" PARENT_SCOPE)
endfunction()

set(missing_paths "")
file(GLOB_RECURSE docs "${prefix}/share/doc/plugrt/*.md" "${prefix}/share/plugrt/examples/*")
foreach(doc IN LISTS docs)
  check_doc_paths("${doc}")
endforeach()
if(missing_paths)
  message(FATAL_ERROR "installed docs name files the install does not have:${missing_paths}")
endif()
foreach(file share/doc/plugrt/sdk/README.md share/doc/plugrt/sdk/ABI_CHANGELOG.md
             share/doc/plugrt/sdk/docs/reading_blobs.md share/plugrt/examples/elementwise/CMakeLists.txt
             share/plugrt/examples/scale_shift/CMakeLists.txt)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install lacks ${file}")
  endif()
endforeach()
# No other installed SDK file (headers, sources, the package) points into plugrt's source
# tree; the docs were checked above, path by path.
file(GLOB_RECURSE sdk_files "${prefix}/include/plugrt/*.h" "${prefix}/share/plugrt/examples/*"
     "${prefix}/${LIBDIR}/cmake/plugrt/*" "${prefix}/${LIBDIR}/pkgconfig/plugrt.pc")
foreach(file IN LISTS sdk_files)
  file(READ "${file}" text)
  string(REGEX MATCH "(^|[ (`'\"])(core|backends|bench|tools|runtime|placement|plugins|test)/[A-Za-z0-9_.-]+" source
         "${text}")
  if(source)
    message(FATAL_ERROR "${file} names '${source}', a file of plugrt's source tree that is not installed")
  endif()
endforeach()

# ---- A generated backend installs into the plugrt it was built against ---------------------
run(${CMAKE_COMMAND} -S "${generated}" -B "${generated}/build" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${generated}/build")
run(${CMAKE_CTEST_COMMAND} --test-dir "${generated}/build" --output-on-failure)
run(${CMAKE_COMMAND} --install "${generated}/build")
if(NOT EXISTS "${prefix}/${LIBDIR}/plugrt/plugins/libplugrt_my_npu.so")
  message(FATAL_ERROR "a plain cmake --install of a generated backend did not put it into ${prefix}/${LIBDIR}/plugrt/plugins")
endif()
run("${prefix}/bin/plugrt" backends)
expect_in("${output}" "my_npu [^\n]* yes" "plugrt backends after installing the generated backend")

# ---- The examples and the generated backend, with CMake and with pkg-config ---------------
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
run(${PKG_CONFIG} --cflags --libs plugrt)
expect_in("${output}" "--version-script=[^ \n]*/cmake/plugrt/plugin_exports\\.map" "pkg-config --libs plugrt")
separate_arguments(flags UNIX_COMMAND "${output}")
foreach(example elementwise scale_shift)
  set(source_dir "${prefix}/share/plugrt/examples/${example}")
  run(${CMAKE_COMMAND} -S "${source_dir}" -B "${WORK_DIR}/${example}" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}"
      "-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/vendor" "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/${example}")
  run("${kit}" --plugin "${WORK_DIR}/${example}/libplugrt_${example}.so")
endforeach()
foreach(source elementwise/src/elementwise_backend.cc scale_shift/src/scale_shift_backend.cc)
  get_filename_component(name "${source}" NAME_WE)
  string(REPLACE "_backend" "" name "${name}")
  list(APPEND pkg_config_builds "${name}|${prefix}/share/plugrt/examples/${source}")
endforeach()
list(APPEND pkg_config_builds "my_npu|${generated}/src/my_npu_backend.cc")
file(MAKE_DIRECTORY "${WORK_DIR}/pkg_config")
foreach(build IN LISTS pkg_config_builds)
  string(REPLACE "|" ";" parts "${build}")
  list(GET parts 0 name)
  list(GET parts 1 source)
  set(plugin "${WORK_DIR}/pkg_config/libplugrt_${name}.so")
  run(${CXX} -std=c++17 -O2 -shared -fPIC "${source}" ${flags} -o "${plugin}")
  run("${kit}" --plugin "${plugin}")
endforeach()

# ---- scale_shift: a dimension that varies, constants by name ------------------------------
run("${PYTHON}" "${SOURCE_DIR}/sdk/test/scale_shift_model.py" "${WORK_DIR}")
run("${kit}" --plugin "${WORK_DIR}/scale_shift/libplugrt_scale_shift.so" --model "${WORK_DIR}/scale_shift.onnx"
    --input "x=${WORK_DIR}/x.npy" --expect "y=${WORK_DIR}/y.npy" --dim n=1..8)
expect_in("${output}" "names its constants" "the scale_shift example on a model")
expect_in("${output}" "output 'y': matches" "the scale_shift example on a model")
