#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Runs ONNX models on ONNX Runtime's CPU execution provider (the npm package
// onnxruntime-node, one intra-op thread) and writes every output as a .npy file: the
// reference outputs of the real-model corpus. Optionally times each model too.
//
//   node test/real_models/ort_run.js --ort DIR JOBS.json
//
// DIR is where `npm install --ignore-scripts onnxruntime-node@VERSION` was run. JOBS.json
// is a list of jobs, each
//   {"model": "m.onnx", "inputs": {"NAME": "x.npy", ...}, "out_dir": "DIR",
//    "time": {"iterations": 20, "warmup": 3}}          ("time" is optional)
// and each job writes out_dir/<output>.npy per output and out_dir/outputs.json: the
// outputs in order (name, file, dtype, shape) and, when timed, the median latency.
'use strict';

const fs = require('fs');
const path = require('path');

// .npy dtype descr <-> ONNX Runtime tensor type and typed array.
const DTYPES = {
  '<f4': {type: 'float32', array: Float32Array},
  '<f2': {type: 'float16', array: Uint16Array},
  '<i8': {type: 'int64', array: BigInt64Array},
  '<i4': {type: 'int32', array: Int32Array},
  '|u1': {type: 'uint8', array: Uint8Array},
  '|b1': {type: 'bool', array: Uint8Array},
};

function descrOf(type) {
  const entry = Object.entries(DTYPES).find(([, value]) => value.type === type);
  if (!entry) throw new Error(`output type ${type} cannot be written as .npy`);
  return entry[0];
}

// Reads a little-endian, C-order .npy file (format 1.0 to 3.0) into {type, dims, data}.
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerStart = major === 1 ? 10 : 12;
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shape.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const dtype = DTYPES[descr];
  if (!dtype) throw new Error(`${file}: dtype ${descr} is not supported`);
  const start = headerStart + headerLength;
  const copy = new Uint8Array(bytes.subarray(start));  // aligned for the typed array
  return {type: dtype.type, dims, data: new dtype.array(copy.buffer)};
}

function writeNpy(file, tensor) {
  const dims = tensor.dims.join(', ') + (tensor.dims.length === 1 ? ',' : '');
  let header = `{'descr': '${descrOf(tensor.type)}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';  // data aligned on 64 bytes
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

// The same file name `plugrt run --output-dir` gives an output.
function fileNameFor(name, index) {
  const base = name.length > 0 ? name : `output_${index}`;
  return base.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy';
}

async function timeRuns(session, feeds, time) {
  for (let i = 0; i < time.warmup; ++i) await session.run(feeds);
  const latencies = [];
  for (let i = 0; i < time.iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  latencies.sort((a, b) => a - b);
  return latencies[Math.floor(latencies.length / 2)];
}

async function runJob(ort, job) {
  const session = await ort.InferenceSession.create(job.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const [name, file] of Object.entries(job.inputs)) {
    const input = readNpy(file);
    feeds[name] = new ort.Tensor(input.type, input.data, input.dims);
  }
  const results = await session.run(feeds);
  fs.mkdirSync(job.out_dir, {recursive: true});
  const outputs = session.outputNames.map((name, index) => {
    const file = fileNameFor(name, index);
    writeNpy(path.join(job.out_dir, file), results[name]);
    return {name, file, dtype: results[name].type, shape: results[name].dims};
  });
  const summary = {model: job.model, outputs};
  if (job.time) summary.median_ms = await timeRuns(session, feeds, job.time);
  fs.writeFileSync(path.join(job.out_dir, 'outputs.json'), JSON.stringify(summary, null, 2));
  await session.release();
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 3 || args[0] !== '--ort') {
    console.error('usage: node ort_run.js --ort DIR JOBS.json');
    process.exit(2);
  }
  const ort = require(path.resolve(args[1], 'node_modules', 'onnxruntime-node'));
  const jobs = JSON.parse(fs.readFileSync(args[2], 'utf8'));
  for (const job of jobs) {
    try {
      await runJob(ort, job);
    } catch (error) {
      throw new Error(`${job.model}: ${error.message}`);
    }
  }
}

main().catch((error) => {
  console.error(`ort_run: ${error.message}`);
  process.exit(1);
});
