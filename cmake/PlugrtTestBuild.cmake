# SPDX-License-Identifier: Apache-2.0
# plugrt_tune_test_builds(): the test executables that link GoogleTest build faster.
# - They read gtest.h and gmock.h from one precompiled header, made once per build (GCC
#   only): parsing the two costs some 3 s per source file, over about 150 of them.
# - Their own code is compiled with -O1 (outside Debug): a quarter less time than -O2 on a
#   typical test file. What they test (core, backends, tools) keeps the build's flags.
# Together with line tables only (scripts/build.sh), a full build takes some 30% less.
# Called once, after every target is defined.
set(_plugrt_gtest_targets GTest::gtest GTest::gtest_main GTest::gmock GTest::gmock_main GTest::GTest GTest::Main)

# Sets ${out} to TRUE when target ${target} links GoogleTest, directly or through the
# libraries it links (a few levels deep).
function(_plugrt_links_gtest target depth out)
  set(${out} FALSE PARENT_SCOPE)
  if(depth GREATER 3 OR NOT TARGET "${target}")
    return()
  endif()
  get_target_property(type "${target}" TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(libraries "${target}" INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(libraries "${target}" LINK_LIBRARIES)
  endif()
  foreach(library IN LISTS libraries)
    string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" library "${library}")
    if(library IN_LIST _plugrt_gtest_targets)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
    math(EXPR deeper "${depth} + 1")
    _plugrt_links_gtest("${library}" ${deeper} found)
    if(found)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# Appends to ${out} the executables defined in ${dir} and the directories below it.
function(_plugrt_executables_below dir out)
  set(found ${${out}})
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type "${target}" TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND found "${target}")
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    _plugrt_executables_below("${subdirectory}" found)
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(plugrt_tune_test_builds)
  if(NOT PLUGRT_BUILD_TESTS OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()  # clang rejects a header made under other -D options; the fuzz build has few tests
  endif()
  # The header's owner is an executable (never run) so that it is compiled as the tests
  # are (-fPIE): GCC refuses a precompiled header made with other code-generation flags.
  add_executable(plugrt_test_headers "${PROJECT_SOURCE_DIR}/cmake/test_headers_main.cc")
  target_link_libraries(plugrt_test_headers PRIVATE GTest::gmock GTest::gtest $<BUILD_INTERFACE:plugrt_warnings>)
  set(faster "$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<CONFIG:Debug>>>:-O1>")  # after the build type's -O2
  target_compile_options(plugrt_test_headers PRIVATE "${faster}")
  target_precompile_headers(plugrt_test_headers PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:<gtest/gtest.h$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<gmock/gmock.h$<ANGLE-R>>")
  _plugrt_executables_below("${PROJECT_SOURCE_DIR}" executables)
  set(count 0)
  list(REMOVE_ITEM executables plugrt_test_headers)
  foreach(target IN LISTS executables)
    get_target_property(libraries "${target}" LINK_LIBRARIES)
    if("benchmark::benchmark" IN_LIST libraries)
      continue()  # a benchmark keeps the build's flags
    endif()
    _plugrt_links_gtest("${target}" 0 links)
    if(links)
      target_precompile_headers("${target}" REUSE_FROM plugrt_test_headers)
      target_compile_options("${target}" PRIVATE "${faster}")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  message(STATUS "plugrt: ${count} test executables read gtest.h and gmock.h precompiled, at -O1")
endfunction()
