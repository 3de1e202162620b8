#!/usr/bin/env node
// Runs a model with ONNX Runtime (npm onnxruntime-node, CPU) on .npy inputs and writes one
// .npy per output, named like `switchyard run` names them. The peer for cross-checks.
//   node bench/ort_run.js MODEL --input NAME=FILE ... --outputs DIR [--threads N]
'use strict';
const path = require('path');
const fs = require('fs');
const { readNpy, writeNpy } = require('./npy');

function loadOrt() {
  const root = path.join(__dirname, '..', 'third_party', 'node', 'node_modules', 'onnxruntime-node');
  return require(root);
}

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const inputs = {}; let out = null; let threads = 1;
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--input') { const [n, f] = args[++i].split(/=(.*)/s); inputs[n] = f; }
    else if (args[i] === '--outputs') out = args[++i];
    else if (args[i] === '--threads') threads = Number(args[++i]);
  }
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1 });
  const feeds = {};
  for (const [name, file] of Object.entries(inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  const results = await session.run(feeds);
  fs.mkdirSync(out, { recursive: true });
  for (const name of session.outputNames) {
    const t = results[name];
    const file = path.join(out, name.replace(/[^A-Za-z0-9._-]/g, '_') + '.npy');
    writeNpy(file, t.type, t.dims, t.data);
  }
}
main().catch(e => { console.error('error: ' + e.message); process.exit(1); });
