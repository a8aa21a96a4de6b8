'use strict'
// worker_threads: Generator.shared gives every thread of a process one lease and one counter;
// a thread's exit releases what it held.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { rf, root } = require('./support')

function run(src, workerData) {
  return new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { root, ...workerData } })
    const messages = []
    w.on('message', (m) => messages.push(m))
    w.on('error', reject)
    w.on('exit', (code) => (code === 0 ? resolve(messages) : reject(new Error(`worker exited with ${code}`))))
  })
}

test('8 worker threads x 200,000 IDs on Generator.shared: all unique, one worker ID', async () => {
  const THREADS = 8
  const PER = 200_000
  const shared = new SharedArrayBuffer(THREADS * PER * 8)
  const src = `
    const { workerData } = require('node:worker_threads')
    const rf = require(workerData.root)
    const gen = rf.Generator.shared({ layout: 'twitter' })
    const out = new BigUint64Array(workerData.shared, workerData.index * workerData.per * 8, workerData.per)
    for (let i = 0; i < workerData.per; i++) out[i] = gen.nextId()
    gen.close()`
  await Promise.all(Array.from({ length: THREADS }, (_, index) => run(src, { shared, index, per: PER })))
  const all = new BigUint64Array(shared)
  for (let t = 0; t < THREADS; t++) {
    const part = all.subarray(t * PER, (t + 1) * PER)
    for (let i = 1; i < PER; i++) assert.ok(part[i - 1] < part[i], `thread ${t} went backwards at ${i}`)
  }
  const sorted = all.slice().sort()
  let dups = 0
  for (let i = 1; i < sorted.length; i++) if (sorted[i - 1] === sorted[i]) dups++
  assert.equal(dups, 0)
  assert.ok(sorted[0] > 0n)
  const workers = new Set([all[0], all[PER], all[all.length - 1]].map((id) => rf.decode(id, 'twitter').workerId))
  assert.equal(workers.size, 1, 'every thread used the one shared lease')
})

test('a worker thread that exits without close() releases its lease', async () => {
  const opts = { layout: 'js_safe', namespace: 'thread-exit', workerId: 3 }
  const src = `
    const { workerData, parentPort } = require('node:worker_threads')
    const rf = require(workerData.root)
    const gen = new rf.Generator(workerData.opts)
    globalThis.keep = gen
    parentPort.postMessage(String(gen.nextId()))`
  const [id] = await run(src, { opts })
  assert.equal(rf.decode(id, 'js_safe').workerId, 3)
  // Worker ID 3 is free again: a fixed worker ID is locked, so this throws while it is held.
  const gen = new rf.Generator(opts)
  assert.ok(gen.nextId() > BigInt(id))
  gen.close()
})

test('a shared generator stays open while another thread still uses it', async () => {
  const opts = { layout: 'twitter', backend: 'memory', workerId: 77 }
  const mine = rf.Generator.shared(opts)
  const before = mine.nextId()
  const src = `
    const { workerData, parentPort } = require('node:worker_threads')
    const rf = require(workerData.root)
    const gen = rf.Generator.shared(workerData.opts)
    parentPort.postMessage(String(gen.nextId()))
    gen.close()`
  const [theirs] = await run(src, { opts })
  assert.ok(BigInt(theirs) > before)
  assert.ok(mine.nextId() > BigInt(theirs), 'the thread closing its hold did not close ours')
  mine.close()
})

void path

test('Generator.shared builds outside its registry lock: a slow backend for one key blocks no other key', async () => {
  // A server that accepts connections and never answers: building a generator on it waits for
  // the call timeout (2 s with a 60 s lease TTL).
  const net = require('node:net')
  const sockets = []
  const server = net.createServer((s) => sockets.push(s))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  const slow = { backend: `redis://127.0.0.1:${port}/0`, leaseTtlMs: 60000, namespace: 'slow-shared' }
  const src = `
    const { parentPort, workerData } = require('node:worker_threads')
    const rf = require(require('node:path').join(workerData.root, 'index.js'))
    parentPort.postMessage('started')
    try { rf.Generator.shared(workerData.slow); parentPort.postMessage('built') } catch (e) { parentPort.postMessage(e.code) }
  `
  // Every listener is attached before the worker can send or exit: a worker that exits while
  // this thread is busy has its messages and its exit dispatched in one go, and a listener
  // attached after an await would miss the exit.
  const w = new Worker(src, { eval: true, workerData: { root, slow } })
  let started
  const inside = new Promise((resolve) => (started = resolve))
  const done = new Promise((resolve, reject) => {
    const messages = []
    w.on('message', (m) => (m === 'started' ? started() : messages.push(m)))
    w.on('error', reject)
    w.on('exit', () => resolve(messages))
  })
  await inside
  await new Promise((resolve) => setTimeout(resolve, 200)) // the worker is inside shared() now
  const start = process.hrtime.bigint()
  const other = rf.Generator.shared({ backend: 'memory', workerId: 5, layout: 'twitter' })
  const tookMs = Number(process.hrtime.bigint() - start) / 1e6
  other.nextId()
  other.close()
  const [code] = await done
  for (const s of sockets) s.destroy()
  server.close()
  assert.equal(code, 'ERR_RIMEFLAKE_LEASE')
  assert.ok(tookMs < 1000, `another key's shared() waited ${tookMs} ms for the slow build`)
})

test('fill writes a SharedArrayBuffer-backed array that another thread reads meanwhile', async () => {
  const N = 1 << 16
  const sab = new SharedArrayBuffer(N * 8)
  const src = `
    const { parentPort, workerData } = require('node:worker_threads')
    const seen = new BigUint64Array(workerData.sab)
    let reads = 0
    parentPort.postMessage('reading')
    const until = Date.now() + 300
    while (Date.now() < until) { for (let i = 0; i < seen.length; i += 997) Atomics.load(seen, i); reads++ }
    parentPort.postMessage(reads)
  `
  const w = new Worker(src, { eval: true, workerData: { root, sab } })
  await new Promise((resolve) => w.once('message', resolve))
  const ids = new BigUint64Array(sab)
  const gen = new rf.Generator({ backend: 'memory', workerId: 6 })
  for (let round = 0; round < 20; round++) assert.equal(gen.fill(ids), N)
  for (let i = 1; i < N; i++) assert.ok(ids[i] > ids[i - 1])
  gen.close()
  const reads = await new Promise((resolve) => w.once('message', resolve))
  assert.ok(reads > 0)
})

// What a fill into the caller's array does cannot be seen in the IDs (a plain store of a whole
// u64 reads back the same): the internals build counts the IDs stored through the one atomic
// path instead, so a fill (own property or prototype method) that wrote the caller's memory
// any other way leaves the count short. nextIds writes memory it made itself: not counted.
test('fill stores into the caller\'s array, shared or not, only through the atomic path', () => {
  assert.equal(typeof rf._callerArrayStores, 'function', 'the addon was built without --features internals: run make node-env')
  const gen = new rf.Generator({ backend: 'memory', workerId: 7 })
  const fills = [
    ['own fill, SharedArrayBuffer', (a) => gen.fill(a), () => new BigUint64Array(new SharedArrayBuffer(5000 * 8))],
    ['prototype fill, SharedArrayBuffer', (a) => rf.Generator.prototype.fill.call(gen, a), () => new BigUint64Array(new SharedArrayBuffer(5000 * 8))],
    ['own fill, ArrayBuffer', (a) => gen.fill(a), () => new BigUint64Array(5000)],
    ['prototype fill, ArrayBuffer', (a) => rf.Generator.prototype.fill.call(gen, a), () => new BigUint64Array(5000)],
    ['own fill, a view at an offset', (a) => gen.fill(a), () => new BigUint64Array(new SharedArrayBuffer(5008 * 8), 64, 5000)],
  ]
  for (const [what, fill, make] of fills) {
    const ids = make()
    const before = rf._callerArrayStores()
    assert.equal(fill(ids), 5000, what)
    assert.equal(rf._callerArrayStores() - before, 5000n, `${what}: IDs stored atomically`)
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], what)
  }
  const before = rf._callerArrayStores()
  assert.equal(gen.nextIds(3000).length, 3000)
  assert.equal(rf._callerArrayStores(), before)
  gen.close()
})
