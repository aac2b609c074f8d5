/* SPDX-License-Identifier: Apache-2.0 */
/* app_c MODEL OUT_DIR NAME=FILE.npy...: runs MODEL (.prt or .onnx) on the inputs given
 * and writes OUT_DIR/<output name>.npy for each output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugrt/plugrt_c.h"

static void check(plugrt_error* error) {
  if (error == NULL) return;
  fprintf(stderr, "app_c: %s\n", plugrt_error_message(error));
  exit(1);
}

int main(int argc, char** argv) {
  plugrt_runtime* runtime;
  plugrt_session* session;
  if (argc < 3) return fprintf(stderr, "usage: app_c MODEL OUT_DIR NAME=FILE.npy...\n"), 2;
  check(plugrt_runtime_create(NULL, &runtime));
  check(plugrt_session_open(runtime, argv[1], &session));
  size_t num_inputs = plugrt_session_num_inputs(session), i;
  plugrt_tensor** tensors = calloc(num_inputs, sizeof(*tensors));
  const DLTensor** inputs = calloc(num_inputs, sizeof(*inputs));
  for (int arg = 3; arg < argc; ++arg) {
    char* file = strchr(argv[arg], '=');
    if (file == NULL) return fprintf(stderr, "app_c: '%s' is not NAME=FILE.npy\n", argv[arg]), 2;
    *file++ = '\0';
    check(plugrt_session_input_index(session, argv[arg], &i));
    check(plugrt_tensor_read_npy(file, &tensors[i]));
    inputs[i] = plugrt_tensor_dltensor(tensors[i]);
  }
  check(plugrt_session_run(session, inputs, num_inputs));
  mkdir(argv[2], 0777);
  for (i = 0; i < plugrt_session_num_outputs(session); ++i) {
    plugrt_tensor_info info = {sizeof(info)};
    const DLTensor* output;
    char path[4096];
    check(plugrt_session_output_info(session, i, &info));
    check(plugrt_session_output(session, i, &output));
    snprintf(path, sizeof(path), "%s/%s.npy", argv[2], info.name);
    check(plugrt_tensor_write_npy(path, output));
  }
  for (i = 0; i < num_inputs; ++i) plugrt_tensor_free(tensors[i]);
  free(tensors);
  free(inputs);
  plugrt_session_destroy(session);
  plugrt_runtime_destroy(runtime);
  return 0;
}
