# plugrt_add_backend(NAME <name> SOURCES <src>... [OUTPUT_DIRECTORY <dir>])
#
# Builds a plugrt backend plugin: a MODULE library named libplugrt_<name>.so, compiled
# with hidden visibility and linked with a version script that exports only the entry
# function and the metadata record. The target is called plugrt_backend_<name>; link
# your own libraries to it with target_link_libraries(). It links the SDK (headers
# only) and never the runtime core.
set(_PLUGRT_EXPORTS_MAP "${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map")

function(plugrt_add_backend)
  cmake_parse_arguments(ARG "" "NAME;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "plugrt_add_backend: NAME and SOURCES are required")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "plugrt_add_backend: NAME '${ARG_NAME}' must be [a-z0-9_]+")
  endif()
  set(target plugrt_backend_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE plugrt::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "plugrt_${ARG_NAME}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS "${_PLUGRT_EXPORTS_MAP}")
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${_PLUGRT_EXPORTS_MAP}"
    "LINKER:--no-undefined")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
endfunction()
