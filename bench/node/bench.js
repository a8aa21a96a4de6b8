'use strict'
// rimeflake beside other Node ID generators, in one run (method: bench/METHOD.md).
//
// Each row is a loop of at most 100,000 calls written out for that row (one monomorphic call
// site), timed with process.hrtime.bigint(), after a 30 ms pause so that a capped generator
// (4,096 IDs per ms for the twitter layout) is measured below its cap. Rows take turns, one
// loop each per round, 9 rounds; figures are the median and the best loop per call (per ID for
// batch rows). Every row is also run untimed for 200,000 IDs to count duplicates.
//
//   node bench/node/bench.js                  # prints the table and updates bench/RESULTS.md
//   node bench/node/bench.js --no-write       # prints only
//   node bench/node/bench.js --rimeflake-only # rimeflake's rows and the floors only, printed as
//                                             # JSON (wall and CPU ns/ID), for bench/turns/run.sh
//
// `make bench-node` builds the addon in release mode with the internals feature (its `_floor`
// is the reference row) and points the loader at it (NAPI_RS_NATIVE_LIBRARY_PATH).
// RIMEFLAKE_BENCH_LIB names another copy of the package to load (`make bench-node BEFORE=<commit>`
// loads the package at that commit with its own addon).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const { Worker } = require('node:worker_threads')
const LIB = process.env.RIMEFLAKE_BENCH_LIB || path.join(__dirname, '..', '..', 'bindings-node')
const ONLY_RIMEFLAKE = process.argv.includes('--rimeflake-only')
const rf = require(LIB)
if (typeof rf._floor !== 'function') {
  throw new Error('bench.js needs an addon built with the internals feature (make bench-node builds one)')
}
const { Snowflake: Sapphire } = require('@sapphire/snowflake')
const Snowflakify = require('snowflakify').default
const { Snowflake: NodeSnowflake } = require('nodejs-snowflake')
const uuid = require('uuid')

const MAX_CALLS = 100_000
const LOOPS = 9
const PAUSE_MS = 30
const UNIQUE_N = 200_000
const RESULTS = path.join(__dirname, '..', 'RESULTS.md')
const BEGIN = '<!-- node:begin -->'
const END = '<!-- node:end -->'

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
const now = () => process.hrtime.bigint()
const version = (pkg) => JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', pkg, 'package.json'), 'utf8')).version

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[s.length >> 1]
}

// ---- the rows ---------------------------------------------------------------------------------

const twitter = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 1 })
const dflt = new rf.Generator({ layout: 'default', backend: 'memory', workerId: 2 })
// The same generator kind with the hot-path own properties removed: calls then reach the
// #[napi] class method on the prototype (the shape that was not chosen).
const viaClass = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 3 })
delete viaClass.nextId
const sapphire = new Sapphire(new Date('2024-01-01T00:00:00Z'))
const snowflakify = new Snowflakify()
const nodeSnowflake = new NodeSnowflake({ custom_epoch: Date.UTC(2024, 0, 1), instance_id: 1 })
const buf = new BigUint64Array(4096)

const rows = [
  { name: 'floor: exported napi function, no argument, returning a bigint', ver: '-', key: 'floor',
    note: 'the reference for ratios', run(n) { let x; for (let i = 0; i < n; i++) x = rf._floor(); return x } },
  { name: 'floor: process.hrtime.bigint()', ver: '-', key: 'hrtime',
    run(n) { let x; for (let i = 0; i < n; i++) x = process.hrtime.bigint(); return x } },
  { name: 'rimeflake gen.nextId() (twitter, memory)', ver: rf.VERSION, key: 'nextId', unique: () => twitter.nextId(),
    note: 'own-property napi function, generator as its data', run(n) { let x; for (let i = 0; i < n; i++) x = twitter.nextId(); return x } },
  { name: 'rimeflake gen.nextIdString() (twitter, memory)', ver: rf.VERSION, key: 'nextIdString', unique: () => twitter.nextIdString(),
    note: 'decimal string', run(n) { let x; for (let i = 0; i < n; i++) x = twitter.nextIdString(); return x } },
  { name: 'rimeflake gen.fill(BigUint64Array(4096))', ver: rf.VERSION, key: 'fill', per: 4096,
    oneMs: () => Array.from(twitter.nextIds(8192)),
    note: 'per ID, in place', run(n) { let x; for (let i = 0; i < n; i++) x = twitter.fill(buf); return x } },
  { name: 'rimeflake gen.nextIds(4096)', ver: rf.VERSION, key: 'nextIds', per: 4096,
    note: 'per ID, new BigUint64Array', run(n) { let x; for (let i = 0; i < n; i++) x = twitter.nextIds(4096); return x } },
  { name: 'rimeflake nextId() as a #[napi] class method (twitter)', ver: rf.VERSION, key: 'classMethod',
    note: 'the shape not chosen', run(n) { let x; for (let i = 0; i < n; i++) x = viaClass.nextId(); return x } },
  { name: 'rimeflake nextId() as a prototype function installed by hand (twitter)', ver: rf.VERSION, key: 'protoMethod',
    note: 'the shape not chosen: finds the generator through this (type tag, unwrap)', run(n) { let x; for (let i = 0; i < n; i++) x = twitter._nextIdProto(); return x } },
  { name: 'rimeflake gen.nextId() (default layout, memory)', ver: rf.VERSION, key: 'nextIdDefault', unique: () => dflt.nextId(),
    note: '512 IDs/ms, borrows ahead', run(n) { let x; for (let i = 0; i < n; i++) x = dflt.nextId(); return x } },
  { name: 'rimeflake skywalking.globalId()', ver: rf.VERSION, key: 'globalId', unique: () => rf.skywalking.globalId(),
    note: 'SkyWalking format, string', run(n) { let x; for (let i = 0; i < n; i++) x = rf.skywalking.globalId(); return x } },
  { name: '@sapphire/snowflake generate()', ver: version('@sapphire/snowflake'), key: 'sapphire', unique: () => sapphire.generate(),
    // What a fast machine does in one millisecond, made certain: 8,192 calls with one timestamp.
    oneMs: () => { const t = Date.now(); return Array.from({ length: 8192 }, () => sapphire.generate({ timestamp: t })) },
    note: 'pure JS; the 12-bit increment wraps without looking at the clock', run(n) { let x; for (let i = 0; i < n; i++) x = sapphire.generate(); return x } },
  { name: 'snowflakify nextId()', ver: version('snowflakify'), key: 'snowflakify', unique: () => snowflakify.nextId(),
    note: 'pure JS; busy-waits at 4,096/ms', run(n) { let x; for (let i = 0; i < n; i++) x = snowflakify.nextId(); return x } },
  { name: 'nodejs-snowflake getUniqueID()', ver: version('nodejs-snowflake'), key: 'nodejsSnowflake', unique: () => nodeSnowflake.getUniqueID(),
    note: 'Rust as WASM; 1,024/ms', run(n) { let x; for (let i = 0; i < n; i++) x = nodeSnowflake.getUniqueID(); return x } },
  { name: 'uuid v7()', ver: version('uuid'), key: 'uuid7', unique: () => uuid.v7(),
    note: 'string', run(n) { let x; for (let i = 0; i < n; i++) x = uuid.v7(); return x } },
  { name: 'uuid v4()', ver: version('uuid'), key: 'uuid4', unique: () => uuid.v4(),
    note: 'string', run(n) { let x; for (let i = 0; i < n; i++) x = uuid.v4(); return x } },
  { name: 'crypto.randomUUID()', ver: process.version, key: 'randomUUID', unique: () => crypto.randomUUID(),
    note: 'built-in, string', run(n) { let x; for (let i = 0; i < n; i++) x = crypto.randomUUID(); return x } },
]

function calibrate(row) {
  row.per = row.per || 1
  row.run(1000)
  const t0 = now()
  row.run(200)
  const guess = Math.max(Number(now() - t0) / 200, 1)
  row.n = Math.floor(Math.min(MAX_CALLS / row.per, Math.max(20, 5e7 / guess)))
  row.samples = []
  row.cpu = []
}

// The process's CPU time (user + system, every thread's) in µs.
const cpuNow = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

function measure(rows) {
  for (const row of rows) calibrate(row)
  for (let round = 0; round < LOOPS; round++) {
    for (const row of rows) {
      sleep(PAUSE_MS)
      const c0 = cpuNow()
      const t0 = now()
      row.run(row.n)
      const t1 = now()
      const c1 = cpuNow()
      row.samples.push(Number(t1 - t0) / (row.n * row.per))
      row.cpu.push(((c1 - c0) * 1000) / (row.n * row.per))
    }
  }
}

// --rimeflake-only: rimeflake's rows and the floors (controls), one JSON object of medians per
// row on stdout. A row the loaded addon cannot run (a method it lacks) is left out and named
// on stderr; bench/turns/run.sh reports it as missing from that build.
async function rimeflakeOnly() {
  const mine = rows.filter((r) => r.ver === rf.VERSION || r.name.startsWith('floor:'))
  const ok = mine.filter((r) => {
    try {
      calibrate(r)
      return true
    } catch (e) {
      console.error(`bench.js: left out: ${r.name}: ${e.message}`)
      return false
    }
  })
  measure(ok)
  const out = {}
  for (const r of ok) out[r.name] = { wall: median(r.samples), cpu: median(r.cpu) }
  const scaling = await sharedScaling()
  out['rimeflake Generator.shared nextId(), 1 worker thread'] = { wall: scaling.one, cpu: null }
  out['rimeflake Generator.shared nextId(), 2 worker threads'] = { wall: scaling.two, cpu: null }
  process.stdout.write(JSON.stringify(out) + '\n')
}

function uniqueness(row) {
  if (row.oneMs) {
    const ids = row.oneMs()
    const dups = ids.length - new Set(ids).size
    const burst = dups ? `**NO: ${dups} dups in 8,192 IDs of one ms**` : 'yes: 8,192 IDs in one ms'
    if (!row.unique) return burst
    return `${uniqueness({ ...row, oneMs: null })}; ${burst}`
  }
  if (!row.unique) return '-'
  const ids = new Array(UNIQUE_N)
  for (let i = 0; i < UNIQUE_N; i++) ids[i] = row.unique()
  const dups = UNIQUE_N - new Set(ids).size
  let mono = true
  for (let i = 1; i < UNIQUE_N && mono; i++) mono = ids[i - 1] < ids[i]
  if (typeof ids[0] === 'string' && !/^\d+$/.test(ids[0])) mono = null
  const m = mono === null ? '' : mono ? ' mono' : ' not mono'
  return dups ? `**NO (${dups} dups)**${m}` : `yes${m}`
}

// ---- 2 worker threads on Generator.shared -----------------------------------------------------

function threads(count, perThread) {
  const workerSrc = `
    const { workerData, parentPort } = require('node:worker_threads')
    const rf = require(workerData.lib)
    const gen = rf.Generator.shared({ layout: 'twitter', backend: 'memory', workerId: 9 })
    const go = new Int32Array(workerData.go)
    function run(n) { let x; for (let i = 0; i < n; i++) x = gen.nextId(); return x }
    run(20000) // warm up, so the timed loop runs optimized code as the main thread's rows do
    parentPort.postMessage('ready')
    Atomics.wait(go, 0, 0)
    const t0 = process.hrtime.bigint()
    run(workerData.n)
    const t1 = process.hrtime.bigint()
    gen.close()
    parentPort.postMessage([String(t0), String(t1)])`
  return new Promise((resolve, reject) => {
    const go = new SharedArrayBuffer(4)
    const ws = []
    const times = []
    let ready = 0
    for (let i = 0; i < count; i++) {
      const w = new Worker(workerSrc, { eval: true, workerData: { lib: LIB, go, n: perThread } })
      w.on('error', reject)
      w.on('message', (m) => {
        if (m === 'ready') {
          if (++ready === count) {
            Atomics.store(new Int32Array(go), 0, 1)
            Atomics.notify(new Int32Array(go), 0)
          }
          return
        }
        times.push(m.map(BigInt))
        if (times.length === count) {
          const start = times.reduce((a, t) => (t[0] < a ? t[0] : a), times[0][0])
          const end = times.reduce((a, t) => (t[1] > a ? t[1] : a), times[0][1])
          Promise.all(ws.map((x) => x.terminate())).then(() => resolve(Number(end - start) / (count * perThread)))
        }
      })
      ws.push(w)
    }
  })
}

async function sharedScaling() {
  // Keep the shared generator alive across the runs (its registry entry closes with its last user).
  const hold = rf.Generator.shared({ layout: 'twitter', backend: 'memory', workerId: 9 })
  const one = []
  const two = []
  for (let i = 0; i < 5; i++) {
    sleep(PAUSE_MS)
    one.push(await threads(1, 100_000))
    sleep(2 * PAUSE_MS)
    two.push(await threads(2, 100_000))
  }
  hold.close()
  return { one: median(one), two: median(two) }
}

// ---- report -----------------------------------------------------------------------------------

function fmt(x) {
  return x >= 100 ? x.toLocaleString('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 }) : x.toFixed(x < 10 ? 2 : 1)
}

async function main() {
  if (ONLY_RIMEFLAKE) return rimeflakeOnly()
  const write = !process.argv.includes('--no-write')
  const load0 = os.loadavg().map((x) => x.toFixed(2)).join(' ')
  measure(rows)
  const scaling = await sharedScaling()
  const load1 = os.loadavg().map((x) => x.toFixed(2)).join(' ')
  const m = Object.fromEntries(rows.map((r) => [r.key, { med: median(r.samples), best: Math.min(...r.samples) }]))
  const floor = m.floor.med
  const lines = []
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ')
  lines.push(`## Node (${date} UTC)`, '')
  lines.push(`Node ${process.version} (V8 ${process.versions.v8}) on ${os.cpus()[0].model.trim()} (${os.cpus().length} CPUs), ${os.platform()} ${os.release()}; one run of \`make bench-node\` (bench/node/bench.js): median and best of ${LOOPS} loops of at most ${MAX_CALLS.toLocaleString('en-US')} calls, ${PAUSE_MS} ms pause before each loop, rows taking turns; rimeflake built in release mode. Load average at the start: ${load0}; at the end: ${load1}.`, '')
  lines.push('| generator | version | ns/ID (median) | ns/ID (best loop) | × floor (median) | unique (200,000 IDs) | notes |')
  lines.push('|---|---|---:|---:|---:|---|---|')
  for (const r of rows) {
    const x = m[r.key]
    lines.push(`| ${r.name} | ${r.ver} | ${fmt(x.med)} | ${fmt(x.best)} | ${(x.med / floor).toFixed(2)} | ${uniqueness(r)} | ${r.note || ''} |`)
  }
  lines.push(`| rimeflake Generator.shared nextId(), 1 worker thread | ${rf.VERSION} | ${fmt(scaling.one)} | - | ${(scaling.one / floor).toFixed(2)} | - | wall time per ID, median of 5 runs of 100,000 |`)
  lines.push(`| rimeflake Generator.shared nextId(), 2 worker threads | ${rf.VERSION} | ${fmt(scaling.two)} | - | ${(scaling.two / floor).toFixed(2)} | - | wall time over both threads' IDs, median of 5 runs of 2 × 100,000 |`)
  lines.push('')
  const targets = [
    ['nextId() / floor function', m.nextId.med / floor, m.nextId.best / m.floor.best, (v) => v <= 2, '≤ 2'],
    ['snowflakify nextId() / nextId()', m.snowflakify.med / m.nextId.med, m.snowflakify.best / m.nextId.best, (v) => v >= 3, '≥ 3'],
    ['crypto.randomUUID() / nextId()', m.randomUUID.med / m.nextId.med, m.randomUUID.best / m.nextId.best, (v) => v >= 1.5, '≥ 1.5'],
    ['nextIdString() / nextId()', m.nextIdString.med / m.nextId.med, m.nextIdString.best / m.nextId.best, (v) => v <= 1.5, '≤ 1.5'],
    ['fill(4096) ns per ID', m.fill.med, m.fill.best, (v) => v <= 3, '≤ 3'],
    ['2 threads / 1 thread throughput (Generator.shared)', scaling.one / scaling.two, null, (v) => v >= 1.3, '≥ 1.3'],
  ]
  lines.push('| target | medians | met | best loops | met | wanted |', '|---|---:|---|---:|---|---|')
  for (const [name, med, best, ok, want] of targets) {
    const b = best === null ? '- | -' : `${best.toFixed(2)} | ${ok(best) ? 'yes' : '**no**'}`
    lines.push(`| ${name} | ${med.toFixed(2)} | ${ok(med) ? 'yes' : '**no**'} | ${b} | ${want} |`)
  }
  const text = lines.join('\n') + '\n'
  process.stdout.write(text)
  if (write) {
    const old = fs.readFileSync(RESULTS, 'utf8')
    const block = `${BEGIN}\n${text}\n${END}`
    const next = old.includes(BEGIN) ? old.replace(new RegExp(`${BEGIN}[\\s\\S]*?${END}`), block) : `${old.trimEnd()}\n\n${block}\n`
    fs.writeFileSync(RESULTS, next)
  }
  for (const g of [twitter, dflt, viaClass]) g.close()
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
