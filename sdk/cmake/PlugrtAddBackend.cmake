# SPDX-License-Identifier: Apache-2.0
# plugrt_add_backend(NAME <name> SOURCES <src>... [OUTPUT_DIRECTORY <dir>]
#                    [INSTALL | NO_INSTALL] [INSTALL_DIR <dir>] [NO_AOT])
#
# Builds a plugrt backend plugin: a MODULE library named libplugrt_<name>.so, compiled
# with hidden visibility and linked with a version script that exports only the entry
# function and the metadata record. The target is called plugrt_backend_<name>; link
# your own libraries to it with target_link_libraries(). It links the SDK (headers
# only) and never the runtime core.
#
# Installing: `cmake --install` puts the plugin into the plugin directory the loader
# searches, <prefix>/${PLUGRT_PLUGIN_INSTALL_DIR} (lib/plugrt/plugins unless set), or
# INSTALL_DIR. Backends built against an installed SDK (find_package(plugrt)) install
# by default, and a project configured without CMAKE_INSTALL_PREFIX gets the prefix of
# the plugrt it found (PLUGRT_PREFIX), so that a plain `cmake --install` lands in that
# plugrt's plugin directory; `--prefix` or -DCMAKE_INSTALL_PREFIX choose another.
# Inside the plugrt tree only those that say INSTALL install.
#
# plugrt::plugin_exports: the version script alone, for a plugin built with a plain
# add_library(... MODULE ...): target_link_libraries(<target> PRIVATE plugrt::plugin_exports).
#
# NO_AOT: an on-device build. Defines PLUGRT_SDK_NO_AOT, so the plugin hands the host no
# ahead-of-time table; leave the partition/preprocess sources out of SOURCES and guard
# their declarations with `#if PLUGRT_SDK_HAS_AOT`.
set(_PLUGRT_EXPORTS_MAP "${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map")
if(NOT TARGET plugrt::plugin_exports)
  add_library(plugrt::plugin_exports INTERFACE IMPORTED)
  set_target_properties(plugrt::plugin_exports PROPERTIES
    INTERFACE_LINK_OPTIONS "LINKER:--version-script=${_PLUGRT_EXPORTS_MAP}")
endif()

# Built against an installed plugrt, with no install prefix chosen: install into it.
function(_plugrt_default_install_prefix)
  get_property(chosen GLOBAL PROPERTY _PLUGRT_PREFIX_CHOSEN)
  if(PLUGRT_ADD_BACKEND_INSTALLS_BY_DEFAULT AND PLUGRT_PREFIX AND CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT
     AND NOT chosen)
    set(CMAKE_INSTALL_PREFIX "${PLUGRT_PREFIX}" CACHE PATH "Install prefix: the plugrt this backend is built against"
        FORCE)
    set_property(GLOBAL PROPERTY _PLUGRT_PREFIX_CHOSEN ON)
    message(STATUS "plugrt: installing into ${PLUGRT_PREFIX} (the plugrt found), plugins into "
                   "${PLUGRT_PREFIX}/${PLUGRT_PLUGIN_INSTALL_DIR}")
  endif()
endfunction()

function(plugrt_add_backend)
  cmake_parse_arguments(ARG "INSTALL;NO_INSTALL;NO_AOT" "NAME;OUTPUT_DIRECTORY;INSTALL_DIR" "SOURCES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "plugrt_add_backend: NAME and SOURCES are required")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "plugrt_add_backend: NAME '${ARG_NAME}' must be [a-z0-9_]+")
  endif()
  set(target plugrt_backend_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE plugrt::sdk)
  if(ARG_NO_AOT)
    target_compile_definitions(${target} PRIVATE PLUGRT_SDK_NO_AOT)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "plugrt_${ARG_NAME}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS "${_PLUGRT_EXPORTS_MAP}")
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_PLUGRT_EXPORTS_MAP}")
  # Off only in clang sanitizer builds, whose runtime lives in the host executable.
  if(NOT PLUGRT_PLUGINS_ALLOW_UNDEFINED)
    target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()

  _plugrt_default_install_prefix()
  set(install_it "${PLUGRT_ADD_BACKEND_INSTALLS_BY_DEFAULT}")
  if(ARG_INSTALL)
    set(install_it ON)
  elseif(ARG_NO_INSTALL)
    set(install_it OFF)
  endif()
  if(install_it)
    set(dir "${ARG_INSTALL_DIR}")
    if(NOT dir)
      set(dir "${PLUGRT_PLUGIN_INSTALL_DIR}")
    endif()
    if(NOT dir)
      set(dir "lib/plugrt/plugins")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${dir}")
  endif()
endfunction()

# plugrt_add_contract_test(<backend target> [BLOB <file>] [NAME <test name>] [ISOLATED]
#                          [HOST_ABI <1.N>])
#
# Registers a ctest that runs the contract kit (plugrt-contract-test) on the plugin that
# <backend target> builds; ISOLATED runs its backends in a plugrt-backend-host process, as
# the runtime's --isolate does; HOST_ABI plays a host of that older ABI minor (--host-abi). Needs PLUGRT_CONTRACT_TEST_EXECUTABLE (set by
# find_package(plugrt) when the kit is installed, and inside the plugrt tree).
function(plugrt_add_contract_test target)
  cmake_parse_arguments(ARG "ISOLATED" "BLOB;NAME;HOST_ABI" "" ${ARGN})
  if(NOT PLUGRT_CONTRACT_TEST_EXECUTABLE)
    message(WARNING "plugrt_add_contract_test: the contract kit (plugrt-contract-test) is not available")
    return()
  endif()
  set(name "${ARG_NAME}")
  if(NOT name)
    set(name "${target}_contract")
  endif()
  set(extra)
  if(ARG_BLOB)
    list(APPEND extra --blob "${ARG_BLOB}")
  endif()
  if(ARG_ISOLATED)
    list(APPEND extra --isolate)
  endif()
  if(ARG_HOST_ABI)
    list(APPEND extra --host-abi "${ARG_HOST_ABI}")
  endif()
  add_test(NAME ${name} COMMAND "${PLUGRT_CONTRACT_TEST_EXECUTABLE}" --plugin "$<TARGET_FILE:${target}>" ${extra})
endfunction()
