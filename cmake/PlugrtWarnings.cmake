# SPDX-License-Identifier: Apache-2.0
# plugrt_warnings: the project's own warning flags. Linked privately through
# $<BUILD_INTERFACE:...> so they never leak into an installed package's users.
add_library(plugrt_warnings INTERFACE)
target_compile_options(plugrt_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wcast-align
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
  $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes>
  $<$<BOOL:${PLUGRT_WERROR}>:-Werror>)
