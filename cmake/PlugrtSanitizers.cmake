# SPDX-License-Identifier: Apache-2.0
# PLUGRT_SANITIZE: build the whole tree (core, tools, tests, every plugin) with the
# compiler's sanitizers, so that a dlopen'd plugin is instrumented like the host that
# loads it. Values, separated by ',' or ';':
#   address,undefined   ASan + UBSan; UBSan aborts on the first report, so tests fail
#   thread              TSan (cannot be combined with address)
# Works with gcc and clang. scripts/ci-hardening.sh and CMakePresets.json use it.
# PLUGRT_SANITIZE_LEAVE_OUT names checks of those to leave out (-fno-sanitize=...).
#
# PLUGRT_BUILD_FUZZERS (clang only) also instruments every target for libFuzzer's coverage
# (-fsanitize=fuzzer-no-link), with address,undefined unless PLUGRT_SANITIZE says otherwise.
set(PLUGRT_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address,undefined or thread (empty: none)")
set(PLUGRT_SANITIZE_LEAVE_OUT "" CACHE STRING "Sanitizer checks to leave out, e.g. null,alignment (empty: none)")

set(_plugrt_sanitize "${PLUGRT_SANITIZE}")
if(PLUGRT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PLUGRT_BUILD_FUZZERS needs clang (libFuzzer); set CC=clang CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  if(NOT _plugrt_sanitize)
    set(_plugrt_sanitize "address,undefined")
  endif()
endif()
if(NOT _plugrt_sanitize)
  return()
endif()

string(REPLACE "," ";" _plugrt_sanitizers "${_plugrt_sanitize}")
foreach(_s IN LISTS _plugrt_sanitizers)
  if(NOT _s MATCHES "^(address|undefined|thread|leak)$")
    message(FATAL_ERROR "PLUGRT_SANITIZE: unknown sanitizer '${_s}' (address, undefined, thread, leak)")
  endif()
endforeach()
if("thread" IN_LIST _plugrt_sanitizers AND "address" IN_LIST _plugrt_sanitizers)
  message(FATAL_ERROR "PLUGRT_SANITIZE: thread and address cannot be combined")
endif()
list(JOIN _plugrt_sanitizers "," _plugrt_sanitize_flag)

add_compile_options(-fsanitize=${_plugrt_sanitize_flag} -fno-omit-frame-pointer)
if("undefined" IN_LIST _plugrt_sanitizers)
  add_compile_options(-fno-sanitize-recover=all)
endif()
if(PLUGRT_SANITIZE_LEAVE_OUT)
  string(REPLACE ";" "," _plugrt_leave_out "${PLUGRT_SANITIZE_LEAVE_OUT}")
  add_compile_options(-fno-sanitize=${_plugrt_leave_out})  # after -fsanitize=, which it narrows
endif()
add_link_options(-fsanitize=${_plugrt_sanitize_flag})

# gcc links its sanitizer runtime (libasan.so, libtsan.so) into every shared object too.
# clang puts the runtime in the executable only, so a plugin's references to it stay
# undefined until dlopen binds them to the host's copy: plugrt_add_backend() must not
# link plugins with --no-undefined then.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(PLUGRT_PLUGINS_ALLOW_UNDEFINED ON)
endif()
message(STATUS "plugrt: sanitizers ${_plugrt_sanitize_flag}")
