// plugrt-contract-test --plugin PATH [--blob FILE] [--gtest_filter=...]
#include "plugrt/sdk/testing/contract.h"

int main(int argc, char** argv) { return plugrt::sdk::testing::run_contract_tests(argc, argv); }
