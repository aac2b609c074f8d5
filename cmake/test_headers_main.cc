// SPDX-License-Identifier: Apache-2.0
// The owner of the tests' precompiled header (cmake/PlugrtTestBuild.cmake): it is built
// for the sake of that header and never run.
int main() { return 0; }
