// SPDX-License-Identifier: Apache-2.0
// app_cpp MODEL OUT_DIR NAME=FILE.npy...: runs MODEL (.prt or .onnx) on the inputs given
// and writes OUT_DIR/<output name>.npy for each output.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "plugrt/plugrt.hpp"

int main(int argc, char** argv) try {
  if (argc < 3) {
    std::cerr << "usage: app_cpp MODEL OUT_DIR NAME=FILE.npy...\n";
    return 2;
  }
  plugrt::api::Runtime runtime;
  plugrt::api::Session session = runtime.open(argv[1]);
  std::vector<plugrt::api::Tensor> tensors;
  std::vector<const DLTensor*> inputs(session.num_inputs());
  for (int arg = 3; arg < argc; ++arg) {
    const std::string given = argv[arg];
    const size_t equals = given.find('=');
    tensors.push_back(plugrt::api::Tensor::read_npy(given.substr(equals + 1)));
    inputs[session.input_index(given.substr(0, equals))] = &tensors.back().dltensor();
  }
  session.run(inputs);
  std::filesystem::create_directories(argv[2]);
  for (size_t i = 0; i < session.num_outputs(); ++i) {
    plugrt::api::write_npy(std::string(argv[2]) + "/" + session.output_info(i).name + ".npy", session.output(i));
  }
  return 0;
} catch (const plugrt::api::Error& error) {
  std::cerr << "app_cpp: " << error.what() << "\n";
  return 1;
}
