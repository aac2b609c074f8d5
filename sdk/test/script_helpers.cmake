# SPDX-License-Identifier: Apache-2.0
# What the SDK's install tests (cmake -P scripts) share.

# Runs a command; fails the test with its output unless it exits 0. Sets `output` to its
# standard output in the caller's scope.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

# Fails the test unless `text` matches `pattern`.
function(expect_in text pattern what)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "${what}: '${pattern}' not found in:\n${text}")
  endif()
endfunction()
