#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Times one ONNX model on ONNX Runtime's CPU execution provider (the npm package
// onnxruntime-node), the way `plugrt bench` times a program: untimed warm-up runs,
// then the latency of each timed run, summarised as median, p90 and min.
//
//   node bench/ort_bench.js --ort DIR MODEL.onnx --input [NAME=]FILE.npy... [--threads N]
//                           [--iterations N] [--warmup N] [--instances N] [--json]
//
// DIR is where `npm install --ignore-scripts onnxruntime-node` was run (the script
// requires DIR/node_modules/onnxruntime-node). Each --input is a float32, int64 or
// int32 .npy file fed to the model input NAME, or without NAME to the model's inputs in
// order; every model input needs one. A run is `await session.run(feeds)`, so the times
// include the JavaScript binding's cost per call (timing a model that does almost
// nothing measures that cost; bench/compare_runtimes.py does so).
//
// --instances N (default 1) opens N sessions of the model in this process, each with
// --threads intra-op threads: while the first is timed, the other N-1 run back to back,
// each in a worker thread of its own. onnxruntime-node's session.run calls ONNX Runtime
// synchronously on the calling JavaScript thread, so two sessions of one thread never
// overlap; worker threads do. The times are the first session's.
'use strict';

const fs = require('fs');
const path = require('path');
const {Worker, isMainThread, parentPort, workerData} = require('worker_threads');

function usage(message) {
  if (message) console.error(`ort_bench: ${message}`);
  console.error('usage: node bench/ort_bench.js --ort DIR MODEL.onnx --input [NAME=]FILE.npy... ' +
                '[--threads N] [--iterations N] [--warmup N] [--instances N] [--json]');
  process.exit(2);
}

function parseArgs(argv) {
  const options = {threads: 1, iterations: 50, warmup: 5, instances: 1, json: false, inputs: []};
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
    else if (arg === '--instances') options.instances = count('--instances');
    else if (arg === '--json') options.json = true;
    else if (arg === '-h' || arg === '--help') usage();
    else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
    else if (options.model === undefined) options.model = arg;
    else usage(`unexpected argument ${arg}`);
  }
  if (!options.ort || !options.model || options.inputs.length === 0) usage('--ort, MODEL and --input are required');
  if (options.iterations < 1) usage('--iterations must be at least 1');
  if (options.instances < 1) usage('--instances must be at least 1');
  return options;
}

// .npy dtype descr -> ONNX Runtime tensor type, typed array, and how to read one element.
const DTYPES = {
  '<f4': {type: 'float32', array: Float32Array, size: 4, read: (bytes, at) => bytes.readFloatLE(at)},
  '<i8': {type: 'int64', array: BigInt64Array, size: 8, read: (bytes, at) => bytes.readBigInt64LE(at)},
  '<i4': {type: 'int32', array: Int32Array, size: 4, read: (bytes, at) => bytes.readInt32LE(at)},
};

// Reads a little-endian float32, int64 or int32 .npy file (format 1.0 to 3.0, C order).
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
  const dtype = DTYPES[descr[1]];
  if (!dtype) throw new Error(`${file}: dtype ${descr[1]}, only ${Object.keys(DTYPES).join(', ')} are supported`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran order is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  if (bytes.length - dataStart !== count * dtype.size) throw new Error(`${file}: data size does not match shape`);
  const data = new dtype.array(count);
  for (let i = 0; i < count; ++i) data[i] = dtype.read(bytes, dataStart + dtype.size * i);
  return {type: dtype.type, dims, data};
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)));
  return sorted[index];
}

// A session of the model and its feeds.
async function openSession(ort, options) {
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
    feeds[name] = new ort.Tensor(input.type, input.data, input.dims);
  });
  const missing = session.inputNames.filter((name) => !(name in feeds));
  if (missing.length > 0) throw new Error(`${options.model}: no --input for ${missing.join(', ')}`);
  return {session, feeds};
}

// A background instance, in a worker thread: runs its session back to back until the
// main thread sets control[0], counting its runs in control[index].
async function backgroundInstance() {
  const {options, index} = workerData;
  const control = new Int32Array(workerData.control);
  const ort = require(path.resolve(options.ort, 'node_modules', 'onnxruntime-node'));
  const {session, feeds} = await openSession(ort, options);
  await session.run(feeds);
  parentPort.postMessage({ready: true});
  while (Atomics.load(control, 0) === 0) {
    await session.run(feeds);
    Atomics.add(control, index, 1);
  }
  await session.release();
}

// Starts the N-1 background instances; resolves once each has run once.
async function startBackground(options) {
  const control = new Int32Array(new SharedArrayBuffer(4 * options.instances));
  const workers = [];
  const ready = [];
  for (let index = 1; index < options.instances; ++index) {
    const worker = new Worker(__filename, {workerData: {options, index, control: control.buffer}});
    const instance = {worker, error: null};
    instance.exited = new Promise((resolve) => worker.once('exit', resolve));
    ready.push(new Promise((resolve, reject) => {
      const failed = (error) => {
        instance.error = error;
        reject(error);
      };
      worker.on('message', (message) => (message.error ? failed(new Error(message.error)) : resolve()));
      worker.on('error', failed);
      worker.once('exit', (code) => reject(new Error(`background instance ${index} exited (status ${code})`)));
    }));
    workers.push(instance);
  }
  await Promise.all(ready);
  return {control, workers};
}

// Stops the background instances; returns how many runs each made.
async function stopBackground(background) {
  Atomics.store(background.control, 0, 1);
  await Promise.all(background.workers.map((instance) => instance.exited));
  const failed = background.workers.find((instance) => instance.error);
  if (failed) throw new Error(`background instance: ${failed.error.message}`);
  return background.workers.map((instance, i) => Atomics.load(background.control, i + 1));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  // From loading the library to the first result: what an application waits for first.
  const loadStart = process.hrtime.bigint();
  const ort = require(path.resolve(options.ort, 'node_modules', 'onnxruntime-node'));
  const {session, feeds} = await openSession(ort, options);
  let firstResultMs = null;
  const run = async () => {
    await session.run(feeds);
    if (firstResultMs === null) firstResultMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  };
  const background = options.instances > 1 ? await startBackground(options) : null;

  for (let i = 0; i < options.warmup; ++i) await run();
  const latencies = [];
  for (let i = 0; i < options.iterations; ++i) {
    const start = process.hrtime.bigint();
    await run();
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  await session.release();
  const backgroundRuns = background ? await stopBackground(background) : null;

  const result = {
    model: options.model,
    runtime: `onnxruntime-node ${ort.env.versions ? ort.env.versions.common : ''}`.trim(),
    median_ms: percentile(latencies, 0.5),
    p90_ms: percentile(latencies, 0.9),
    min_ms: percentile(latencies, 0.0),
    iterations: options.iterations,
    warmup: options.warmup,
    threads: options.threads,
    first_result_ms: firstResultMs,
  };
  if (background) {
    result.instances = options.instances;
    result.background_runs = backgroundRuns;
  }
  if (options.json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    console.log(`${options.model}: median ${result.median_ms.toFixed(3)} ms, p90 ${result.p90_ms.toFixed(3)} ms ` +
                `over ${options.iterations} iterations (${options.warmup} warm-up, threads ${options.threads}` +
                (background ? `, ${options.instances} instances` : '') + ')');
  }
}

if (isMainThread) {
  main().catch((error) => {
    console.error(`ort_bench: ${error.message}`);
    process.exit(1);
  });
} else {
  backgroundInstance().catch((error) => parentPort.postMessage({error: error.message}));
}
