#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Times one ONNX model on ONNX Runtime's CPU execution provider (the npm package
// onnxruntime-node), the way `plugrt bench` times a program: untimed warm-up runs,
// then the latency of each timed run, summarised as median, p90 and min.
//
//   node bench/ort_bench.js --ort DIR MODEL.onnx --input [NAME=]FILE.npy... [--threads N]
//                           [--iterations N] [--warmup N] [--json]
//
// DIR is where `npm install --ignore-scripts onnxruntime-node` was run (the script
// requires DIR/node_modules/onnxruntime-node). Each --input is a float32 .npy file
// fed to the model input NAME, or without NAME to the model's inputs in order; every
// model input needs one. A run is `await session.run(feeds)`, so the times
// include the JavaScript binding's cost per call (timing a model that does almost
// nothing measures that cost; bench/compare_runtimes.py does so).
'use strict';

const fs = require('fs');
const path = require('path');

function usage(message) {
  if (message) console.error(`ort_bench: ${message}`);
  console.error('usage: node bench/ort_bench.js --ort DIR MODEL.onnx --input [NAME=]FILE.npy... ' +
                '[--threads N] [--iterations N] [--warmup N] [--json]');
  process.exit(2);
}

function parseArgs(argv) {
  const options = {threads: 1, iterations: 50, warmup: 5, json: false, inputs: []};
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    const count = (name) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 0) usage(`${name} must be a non-negative integer`);
      return n;
    };
    if (arg === '--ort') options.ort = value();
    else if (arg === '--input') options.inputs.push(value());
    else if (arg === '--threads') options.threads = count('--threads');
    else if (arg === '--iterations') options.iterations = count('--iterations');
    else if (arg === '--warmup') options.warmup = count('--warmup');
    else if (arg === '--json') options.json = true;
    else if (arg === '-h' || arg === '--help') usage();
    else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
    else if (options.model === undefined) options.model = arg;
    else usage(`unexpected argument ${arg}`);
  }
  if (!options.ort || !options.model || options.inputs.length === 0) usage('--ort, MODEL and --input are required');
  if (options.iterations < 1) usage('--iterations must be at least 1');
  return options;
}

// Reads a little-endian float32 .npy file (format 1.0 to 3.0, C order).
function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') {
    throw new Error(`${file}: not a .npy file`);
  }
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${file}: unreadable .npy header`);
  if (descr[1] !== '<f4') throw new Error(`${file}: dtype ${descr[1]}, only float32 ('<f4') is supported`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran order is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  if (bytes.length - dataStart !== count * 4) throw new Error(`${file}: data size does not match shape`);
  const data = new Float32Array(count);
  for (let i = 0; i < count; ++i) data[i] = bytes.readFloatLE(dataStart + 4 * i);
  return {dims, data};
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)));
  return sorted[index];
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const ort = require(path.resolve(options.ort, 'node_modules', 'onnxruntime-node'));
  // ONNX Runtime's defaults, but for the thread count: one intra-op pool of N
  // threads (the calling thread included), sequential execution.
  const session = await ort.InferenceSession.create(options.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  options.inputs.forEach((argument, index) => {
    const equals = argument.indexOf('=');
    const name = equals > 0 ? argument.slice(0, equals) : session.inputNames[index];
    if (!session.inputNames.includes(name)) {
      throw new Error(`--input ${argument}: ${options.model} has no input ` +
                      `${name === undefined ? `number ${index + 1}` : `'${name}'`} ` +
                      `(its inputs: ${session.inputNames.join(', ')})`);
    }
    const input = readNpy(equals > 0 ? argument.slice(equals + 1) : argument);
    feeds[name] = new ort.Tensor('float32', input.data, input.dims);
  });
  const missing = session.inputNames.filter((name) => !(name in feeds));
  if (missing.length > 0) throw new Error(`${options.model}: no --input for ${missing.join(', ')}`);

  for (let i = 0; i < options.warmup; ++i) await session.run(feeds);
  const latencies = [];
  for (let i = 0; i < options.iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await session.release();

  const result = {
    model: options.model,
    runtime: `onnxruntime-node ${ort.env.versions ? ort.env.versions.common : ''}`.trim(),
    median_ms: percentile(latencies, 0.5),
    p90_ms: percentile(latencies, 0.9),
    min_ms: percentile(latencies, 0.0),
    iterations: options.iterations,
    warmup: options.warmup,
    threads: options.threads,
  };
  if (options.json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    console.log(`${options.model}: median ${result.median_ms.toFixed(3)} ms, p90 ${result.p90_ms.toFixed(3)} ms ` +
                `over ${options.iterations} iterations (${options.warmup} warm-up, threads ${options.threads})`);
  }
}

main().catch((error) => {
  console.error(`ort_bench: ${error.message}`);
  process.exit(1);
});
