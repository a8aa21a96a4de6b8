'use strict'
// What the caller leaves out is resolved by the core from the environment (RIMEFLAKE_LAYOUT,
// RIMEFLAKE_WORKER_ID, RIMEFLAKE_BACKEND, RIMEFLAKE_STATE_DIR), as in every front end; the
// core's warnings arrive as process warnings. Each case runs in a child with its own env.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { root, tempDir } = require('./support')

function child(src, env) {
  const base = { ...process.env }
  for (const k of Object.keys(base)) if (k.startsWith('RIMEFLAKE_')) delete base[k]
  const r = spawnSync(process.execPath, ['-e', `const rf = require(${JSON.stringify(root)});\n${src}`], { env: { ...base, ...env }, encoding: 'utf8' })
  let json = null
  try {
    json = JSON.parse(r.stdout)
  } catch {}
  return { ...r, json }
}

const report = `
  const gen = new rf.Generator()
  console.log(JSON.stringify({ layout: gen.layout.name, workerId: gen.workerId, closed: gen.closed }))
  gen.close()`

test('the environment fills in what the caller left out', () => {
  const state = path.join(tempDir(), 'state')
  const r = child(report, { RIMEFLAKE_STATE_DIR: state, RIMEFLAKE_LAYOUT: 'twitter', RIMEFLAKE_WORKER_ID: '17', RIMEFLAKE_BACKEND: 'memory', RIMEFLAKE_NO_CONTAINER_WARNING: '1' })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.json, { layout: 'twitter', workerId: 17, closed: false })
})

test('what the caller passes wins over the environment', () => {
  const r = child(`
    const gen = new rf.Generator({ layout: 'js_safe', workerId: 2, backend: 'memory' })
    console.log(JSON.stringify({ layout: gen.layout.name, workerId: gen.workerId }))`, { RIMEFLAKE_LAYOUT: 'twitter', RIMEFLAKE_WORKER_ID: '17', RIMEFLAKE_BACKEND: 'local', RIMEFLAKE_STATE_DIR: tempDir() })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.json, { layout: 'js_safe', workerId: 2 })
})

test('a bad environment value is a ConfigError naming the variable', () => {
  for (const [name, value] of [['RIMEFLAKE_LAYOUT', 'twiter'], ['RIMEFLAKE_WORKER_ID', 'seven'], ['RIMEFLAKE_BACKEND', 'carrier-pigeon']]) {
    const r = child(`
      try { new rf.Generator() } catch (e) { console.log(JSON.stringify({ code: e.code, cls: e.constructor.name, message: e.message })) }`, { [name]: value, RIMEFLAKE_STATE_DIR: tempDir() })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.json.code, 'ERR_RIMEFLAKE_CONFIG', name)
    assert.equal(r.json.cls, 'ConfigError')
    assert.ok(r.json.message.includes(name), `${name}: ${r.json.message}`)
  }
})

test('backends are parsed by the core: unknown ones are a ConfigError, an unreachable server a LeaseError', () => {
  const r = child(`
    for (const backend of ['rediss://localhost?sslmode=require', 'mysql://localhost/ids', 'memory://', 'redis://127.0.0.1:1/0']) {
      try { new rf.Generator({ backend, workerId: 1 }); console.log('null') } catch (e) { console.log(JSON.stringify(e.code)) }
    }`, { RIMEFLAKE_STATE_DIR: tempDir() })
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l)), ['ERR_RIMEFLAKE_CONFIG', 'ERR_RIMEFLAKE_CONFIG', 'ERR_RIMEFLAKE_CONFIG', 'ERR_RIMEFLAKE_LEASE'])
})

test("the core's warnings are process warnings (type RimeflakeWarning, code RIMEFLAKE_<KIND>), each message once", (t) => {
  // The one warning the core has: a container using the default state directory. Outside a
  // container there is none to see, and the test says so.
  const home = tempDir()
  const r = child(`
    const seen = []
    process.on('warning', (w) => seen.push({ name: w.name, code: w.code, message: w.message }))
    const gen = new rf.Generator({ layout: 'js_safe' })
    gen.close()
    new rf.Generator({ layout: 'js_safe' }).close() // the same warning again: emitted once
    setImmediate(() => console.log(JSON.stringify(seen)))`, { HOME: home, XDG_STATE_HOME: '' })
  assert.equal(r.status, 0, r.stderr)
  const warnings = r.json.filter((w) => w.name === 'RimeflakeWarning')
  if (warnings.length === 0) {
    t.skip('no container detected here: the core gave no warning')
    return
  }
  assert.equal(warnings.length, 1, JSON.stringify(warnings))
  assert.equal(warnings[0].code, 'RIMEFLAKE_CONTAINER')
  assert.match(warnings[0].message, /container/)
  // And it is not printed by the core itself: only Node's own warning line is on stderr.
  assert.ok(!/^rimeflake: warning/m.test(r.stderr), r.stderr)
})

// 64 IDs of a `default` generator, each after a 2 ms pause (a time unit of its own, entered
// after an idle spell), checked to increase; their sequences.
async function spacedSequences(options) {
  const rf = require(root)
  const gen = new rf.Generator({ backend: 'memory', workerId: 1, ...options })
  const ids = []
  for (let i = 0; i < 64; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2))
    ids.push(gen.nextId())
  }
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
  const parts = ids.map((id) => gen.decode(id))
  gen.close()
  assert.ok(parts.every((p) => p.workerId === 1)) // decode reads the fields as ever
  return parts.map((p) => Number(p.sequence))
}

test('randomSequenceStart spreads id % N over shards; sonyflake refuses it', async () => {
  // Off: each spaced ID is its unit's sequence 0, so id % 16 is 0 for all of them.
  assert.deepEqual(await spacedSequences({}), new Array(64).fill(0))
  // On: each unit starts at an offset uniform over 512 sequences (id % 16 is the sequence's):
  // fewer than 8 of the 16 shards has a chance below 1e-15, more than 8 zeros below 1e-12.
  const seqs = await spacedSequences({ randomSequenceStart: true })
  assert.ok(new Set(seqs.map((s) => s % 16)).size >= 8, seqs.join())
  assert.ok(seqs.filter((s) => s === 0).length <= 8, seqs.join())
  const rf = require(root)
  assert.throws(() => new rf.Generator({ backend: 'memory', workerId: 1, layout: 'sonyflake', randomSequenceStart: true }),
    (e) => e instanceof rf.ConfigError && /^randomSequenceStart: layout sonyflake puts the worker ID below/.test(e.message))
  assert.throws(() => new rf.Generator({ backend: 'memory', workerId: 1, randomSequenceStart: 1 }),
    (e) => e instanceof TypeError && /options\.randomSequenceStart/.test(e.message))
})
