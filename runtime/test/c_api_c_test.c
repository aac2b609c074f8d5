/* SPDX-License-Identifier: Apache-2.0 */
/* The C API from C: open an ONNX model, run it on zeros, read every output; then the
 * errors a caller meets first (a missing file, a wrong input count). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugrt_c.h"

static int fail(const char* what, plugrt_error* error) {
  fprintf(stderr, "%s: %s\n", what, plugrt_error_message(error));
  plugrt_error_free(error);
  return 1;
}

int main(int argc, char** argv) {
  plugrt_runtime* runtime = NULL;
  plugrt_session* session = NULL;
  plugrt_tensor_info info;
  plugrt_error* error;
  DLTensor input;
  const DLTensor* inputs[1];
  const DLTensor* output = NULL;
  void* zeros;
  size_t count = 1;
  int32_t axis;
  if (argc != 2) return 2;
  if (plugrt_c_api_version() >> 16 != PLUGRT_C_API_VERSION_MAJOR) return 3;
  if ((error = plugrt_runtime_create(NULL, &runtime)) != NULL) return fail("create", error);
  error = plugrt_session_open(runtime, "no-such-model.prt", &session);
  if (error == NULL || strstr(plugrt_error_message(error), "no-such-model.prt") == NULL) return 4;
  plugrt_error_free(error);
  if ((error = plugrt_session_open(runtime, argv[1], &session)) != NULL) return fail("open", error);
  if (plugrt_session_num_inputs(session) != 1) return 5;
  if ((error = plugrt_session_input_info(session, 0, &info)) != NULL) return fail("input_info", error);
  for (axis = 0; axis < info.ndim; ++axis) count *= (size_t)info.shape[axis];
  zeros = calloc(count, info.dtype.bits / 8);
  memset(&input, 0, sizeof(input));
  input.data = zeros;
  input.device.device_type = kDLCPU;
  input.ndim = info.ndim;
  input.dtype = info.dtype;
  input.shape = (int64_t*)info.shape;
  inputs[0] = &input;
  error = plugrt_session_run(session, inputs, 0);
  if (plugrt_error_code_of(error) != PLUGRT_C_INVALID_ARGUMENT) return 6;
  plugrt_error_free(error);
  if ((error = plugrt_session_run(session, inputs, 1)) != NULL) return fail("run", error);
  if ((error = plugrt_session_output(session, 0, &output)) != NULL) return fail("output", error);
  printf("%s: output 0 has %d dimensions; %s\n", argv[1], output->ndim, plugrt_session_report_json(session));
  free(zeros);
  plugrt_session_destroy(session);
  plugrt_runtime_destroy(runtime);
  return 0;
}
