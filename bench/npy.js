// Minimal .npy reader/writer for the ONNX Runtime peer scripts (C order, little-endian).
'use strict';
const fs = require('fs');

const DESCR = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array],
  '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
  '<f2': ['float16', Uint16Array],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
      .filter(s => s.length).map(Number);
  if (!DESCR[descr]) throw new Error(`${path}: unsupported dtype ${descr}`);
  const [type, Ctor] = DESCR[descr];
  const start = off + hlen;
  const bytes = buf.subarray(start);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  let data = new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
  if (type === 'bool') data = Array.from(data, v => v !== 0);
  return { type, dims: shape, data };
}

function writeNpy(path, type, dims, data) {
  const entry = Object.entries(DESCR).find(([, v]) => v[0] === type);
  if (!entry) throw new Error(`cannot write ${type}`);
  const [descr, [, Ctor]] = entry;
  const shape = dims.length === 1 ? `${dims[0]},` : dims.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape}), }`;
  const pad = (64 - ((10 + header.length + 1) % 64)) % 64;
  header += ' '.repeat(pad) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const arr = type === 'bool' ? Uint8Array.from(data, v => (v ? 1 : 0)) : Ctor.from(data);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength)]));
}

module.exports = { readNpy, writeNpy };
