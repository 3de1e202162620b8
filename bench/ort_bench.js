#!/usr/bin/env node
// Times ONNX Runtime 1.30 CPU (npm onnxruntime-node) on a model: session created once with
// all graph optimizations, then warm-up and timed runs of session.run. Prints one JSON
// object: {"latencies_ms": [...], "p50_ms": ..., ...}.
//   node bench/ort_bench.js MODEL --input NAME=FILE.npy ... [--threads N] [--warmup N] [--iterations N]
//                           [--profile PREFIX]
// --profile: ONNX Runtime's own profiler over the timed runs; the JSON trace is written to
// PREFIX_<date>.json (bench/ort_profile.py sums it per op type).
'use strict';
const path = require('path');
const { readNpy } = require('./npy');

async function main() {
  const args = process.argv.slice(2);
  const model = args[0];
  const inputs = {}; let threads = 1, warmup = 3, iterations = 20, profile = '';
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--input') { const [n, f] = args[++i].split(/=(.*)/s); inputs[n] = f; }
    else if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--warmup') warmup = Number(args[++i]);
    else if (args[i] === '--iterations') iterations = Number(args[++i]);
    else if (args[i] === '--profile') profile = args[++i];
  }
  const ort = require(path.join(__dirname, '..', 'third_party', 'node', 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', enableProfiling: profile !== '', profileFilePrefix: profile || undefined });
  const feeds = {};
  for (const [name, file] of Object.entries(inputs)) {
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const lat = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (profile) session.endProfiling();
  const s = [...lat].sort((a, b) => a - b);
  const pct = p => { const r = p / 100 * (s.length - 1); const lo = Math.floor(r);
    const hi = Math.min(lo + 1, s.length - 1); return s[lo] + (s[hi] - s[lo]) * (r - lo); };
  console.log(JSON.stringify({ latencies_ms: lat, p50_ms: pct(50), p95_ms: pct(95),
    mean_ms: lat.reduce((a, b) => a + b, 0) / lat.length, runs: lat.length, threads }));
}
main().catch(e => { console.error('error: ' + e.message); process.exit(1); });
