'use strict'
// The Generator: IDs, batches, the typed arrays, decode round trips, close and dispose, shared.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { rf, root, tempDir } = require('./support')

const memory = (extra = {}) => new rf.Generator({ backend: 'memory', workerId: 5, ...extra })

function increasing(ids) {
  for (let i = 1; i < ids.length; i++) if (!(ids[i - 1] < ids[i])) return false
  return true
}

test('the embedded default: no options at all', () => {
  const gen = new rf.Generator()
  assert.deepEqual(Object.getOwnPropertyNames(gen).sort(), ['fill', 'nextId', 'nextIdNumber', 'nextIdString', 'nextIds'])
  const a = gen.nextId()
  const b = gen.nextId()
  assert.equal(typeof a, 'bigint')
  assert.ok(a < b)
  assert.equal(gen.decode(b).workerId, gen.workerId)
  assert.equal(gen.layout.name, 'default')
  gen.close()
})

test('nextId, nextIdString, nextIds and fill interleave in one increasing sequence', () => {
  const gen = memory()
  const ids = [gen.nextId(), BigInt(gen.nextIdString()), ...gen.nextIds(3)]
  const arr = new BigUint64Array(4)
  assert.equal(gen.fill(arr), 4)
  ids.push(...arr, gen.nextId())
  assert.equal(ids.length, 10)
  assert.ok(increasing(ids), ids.join(' '))
  assert.equal(gen.stats().idsIssued, 10)
  gen.close()
})

test('stats count the state writes of a state directory; no server lease', async () => {
  const gen = new rf.Generator({ workerId: 4, stateDir: tempDir() })
  gen.nextIds(10000)
  await new Promise((resolve) => setTimeout(resolve, 10)) // past a time unit
  gen.nextId()
  const s = gen.stats()
  assert.ok(s.reservationWrites >= 1, JSON.stringify(s))
  assert.equal(s.reservationWriteFailures, 0)
  assert.ok(s.reservationWriteNs > 0)
  assert.equal(s.lease, 'none')
  assert.equal(s.leaseRenewals, 0)
  assert.equal(s.leaseRemainingMs, 0)
  gen.close()
})

test('decode round trip: parts of a fresh ID say who made it and when', () => {
  const gen = memory({ layout: 'twitter' })
  const before = Date.now()
  const id = gen.nextId()
  const p = rf.decode(id, 'twitter')
  assert.equal(p.workerId, 5)
  assert.ok(p.timestampMs >= before - 1 && p.timestampMs <= Date.now() + 2000)
  assert.ok(p.date instanceof Date)
  assert.equal(gen.layout.compose(p), id)
  assert.deepEqual(rf.decode(id, gen.layout), p)
  assert.deepEqual(rf.decode(String(id), new rf.Layout('twitter')), p)
  for (const e of ['dec', 'hex', 'base62', 'base32']) assert.equal(rf.parse(rf.format(id, e), e), id)
  gen.close()
})

test('nextIdString is the decimal form of the same sequence', () => {
  const gen = memory()
  for (let i = 0; i < 1000; i++) {
    const s = gen.nextIdString()
    assert.match(s, /^[1-9][0-9]*$/)
    assert.equal(String(BigInt(s)), s)
  }
  gen.close()
})

test('nextIdNumber: exact Numbers on js_safe, a ConfigError elsewhere', () => {
  const js = memory({ layout: 'js_safe' })
  const a = js.nextIdNumber()
  const b = js.nextIdNumber()
  assert.ok(Number.isSafeInteger(a) && a < b)
  assert.equal(js.decode(b).workerId, 5)
  js.close()
  const wide = memory()
  assert.throws(() => wide.nextIdNumber(), (e) => e instanceof rf.ConfigError && e.code === 'ERR_RIMEFLAKE_CONFIG' && /53/.test(e.message))
  wide.close()
})

test('typed arrays at the edges: length 0 and 1e6', () => {
  const gen = memory({ layout: 'twitter' })
  assert.equal(gen.fill(new BigUint64Array(0)), 0)
  assert.equal(gen.nextIds(0).length, 0)
  const big = new BigUint64Array(1e6)
  assert.equal(gen.fill(big), 1e6)
  assert.ok(increasing(big))
  const more = gen.nextIds(1e6)
  assert.ok(more instanceof BigUint64Array && more.length === 1e6 && increasing(more) && more[0] > big[big.length - 1])
  // A view into a larger buffer is written in place, and only its own part.
  const backing = new BigUint64Array(10)
  const view = new BigUint64Array(backing.buffer, 16, 4)
  assert.equal(gen.fill(view), 4)
  assert.deepEqual([backing[0], backing[1], backing[6]], [0n, 0n, 0n])
  assert.ok(backing[2] > 0n && increasing(view))
  gen.close()
})

test('close: later calls throw ClosedError; closing twice is harmless; using/dispose closes', () => {
  const gen = memory()
  gen.nextId()
  gen.close()
  gen.close()
  assert.equal(gen.closed, true)
  for (const call of [() => gen.nextId(), () => gen.nextIdString(), () => gen.nextIds(2), () => gen.fill(new BigUint64Array(2))]) {
    assert.throws(call, (e) => e instanceof rf.ClosedError && e.code === 'ERR_RIMEFLAKE_CLOSED')
  }
  const g2 = memory({ workerId: 6 })
  assert.equal(typeof g2[Symbol.dispose], 'function')
  g2[Symbol.dispose]()
  assert.equal(g2.closed, true)
})

test('the hot-path functions keep the generator alive when detached from it', () => {
  let gen = memory({ workerId: 7 })
  const next = gen.nextId
  gen = null
  global.gc?.()
  assert.equal(typeof next(), 'bigint')
})

test('a closed durable generator frees its worker ID for the next one', () => {
  const opts = { layout: 'js_safe', namespace: 'reuse' }
  const ids = new Set()
  for (let i = 0; i < 12; i++) {
    const g = new rf.Generator(opts)
    ids.add(g.workerId)
    g.close()
  }
  // js_safe has 8 worker IDs: twelve in a row only work if each close released its lease.
  assert.ok(ids.size <= 8)
})

test('Generator.shared: one counter for equal options, open until the last user closes', () => {
  const opts = { backend: 'memory', workerId: 11, layout: 'twitter' }
  const a = rf.Generator.shared(opts)
  const b = rf.Generator.shared({ ...opts })
  // Each user is a real instance with its own hot-path functions (nothing lands on the class).
  for (const g of [a, b]) {
    assert.ok(g instanceof rf.Generator)
    for (const m of ['nextId', 'nextIdString', 'nextIdNumber', 'nextIds', 'fill']) assert.ok(Object.hasOwn(g, m), m)
  }
  assert.ok(!Object.hasOwn(rf.Generator, 'nextId'))
  assert.notEqual(a.nextId, b.nextId)
  const ids = [a.nextId(), b.nextId(), a.nextId(), b.nextId()]
  assert.ok(increasing(ids))
  assert.equal(a.stats().idsIssued, 4)
  a.close()
  assert.throws(() => a.nextId(), rf.ClosedError)
  assert.ok(b.nextId() > ids[3])
  b.close()
  // After the last user, the same options make a fresh generator.
  const c = rf.Generator.shared(opts)
  assert.equal(c.stats().idsIssued, 0)
  c.close()
})

test('Layout: presets, specs and errors', () => {
  const t = new rf.Layout('twitter')
  assert.equal(t.name, 'twitter')
  assert.equal(t.workerBits, 10)
  assert.ok(t.equals(new rf.Layout('twitter')))
  assert.equal(String(t), t.describe())
  assert.throws(() => new rf.Layout('nope'), rf.ConfigError)
  assert.throws(() => new rf.Layout(3), (e) => e instanceof TypeError && /spec/.test(e.message))
  assert.ok(rf.Layout.presets().includes('js_safe'))
})

test('skywalking.globalId: the SkyWalking format, never repeating', () => {
  const seen = new Set()
  for (let i = 0; i < 10000; i++) seen.add(rf.skywalking.globalId())
  assert.equal(seen.size, 10000)
  const [proc, thread, seq] = rf.skywalking.globalId().split('.')
  assert.equal(proc, rf.skywalking.processId())
  assert.match(proc, /^[0-9a-f]{32}$/)
  assert.match(thread, /^\d+$/)
  assert.match(seq, /^\d+$/)
})

test('skywalking is the same object in CommonJS and the ES module, under that name alone', async () => {
  const esm = await import(path.join(root, 'index.mjs'))
  assert.equal(esm.skywalking, rf.skywalking)
  // tracing was its first name: gone before the first release.
  assert.equal(rf.tracing, undefined)
  assert.equal('tracing' in esm, false)
})

test('the version is the workspace version', () => {
  const fs = require('node:fs')
  const path = require('node:path')
  const cargo = fs.readFileSync(path.join(__dirname, '..', '..', 'Cargo.toml'), 'utf8')
  const v = /\[workspace\.package\][^[]*?version = "([^"]+)"/.exec(cargo)[1]
  assert.equal(rf.VERSION, v)
  assert.equal(require('../package.json').version, v)
  for (const dir of fs.readdirSync(path.join(__dirname, '..', 'npm'))) {
    assert.equal(require(`../npm/${dir}/package.json`).version, v, dir)
  }
})

test('an unclosed generator collected closes off the JavaScript thread', async () => {
  const v8 = require('node:v8')
  const vm = require('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  // 4 IDs per millisecond: 4,000 IDs run a second ahead of the clock, and its close waits
  // that out.
  let gen = new rf.Generator({ backend: 'memory', workerId: 7, layout: 'twitter,time=51,sequence=2', maxWaitMs: 5000 })
  gen.nextIds(4000)
  gen = null
  let last = Date.now()
  let worst = 0
  const timer = setInterval(() => {
    const now = Date.now()
    worst = Math.max(worst, now - last)
    last = now
  }, 10)
  for (let i = 0; i < 10; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await new Promise((resolve) => setTimeout(resolve, 1000))
  clearInterval(timer)
  assert.ok(worst < 400, `the JavaScript thread stood still for ${worst} ms while the generator closed`)
})
