// SPDX-License-Identifier: Apache-2.0
// The owner of the tests' precompiled header (cmake/PlugrtTestBuild.cmake): built so
// that the header is, never run.
int main() { return 0; }
