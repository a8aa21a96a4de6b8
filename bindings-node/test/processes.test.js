'use strict'
// Processes: cluster workers each take their own lease on the embedded default; a restart with
// the clock set back (libfaketime) never repeats an ID.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync, spawn } = require('node:child_process')
const { rf, root, tempDir } = require('./support')

test('4 cluster workers on one state directory: 4 worker IDs, all IDs unique', async () => {
  const dir = tempDir()
  const script = path.join(dir, 'cluster.js')
  fs.writeFileSync(script, `
    const cluster = require('node:cluster')
    const rf = require(${JSON.stringify(root)})
    if (cluster.isPrimary) {
      // Every worker holds its generator until all four have made theirs: a worker that exits
      // early frees its worker ID, and the next one may lease it again (correctly).
      const out = []
      const workers = []
      for (let i = 0; i < 4; i++) {
        const w = cluster.fork()
        workers.push(w)
        w.on('message', (m) => {
          out.push(m)
          if (out.length === 4) for (const x of workers) x.send('exit')
        })
      }
      let exited = 0
      cluster.on('exit', (w, code) => {
        if (code !== 0) process.exitCode = 1
        if (++exited === 4) process.stdout.write(JSON.stringify(out))
      })
    } else {
      const gen = new rf.Generator()
      const ids = gen.nextIds(50000)
      process.on('message', () => process.exit(0))
      process.send({ workerId: gen.workerId, ids: Array.from(ids, String) })
    }`)
  const child = spawn(process.execPath, [script], { env: { ...process.env, RIMEFLAKE_STATE_DIR: path.join(dir, 'state') } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const code = await new Promise((resolve) => child.on('exit', resolve))
  assert.equal(code, 0, stderr)
  const results = JSON.parse(stdout)
  assert.equal(results.length, 4)
  assert.equal(new Set(results.map((r) => r.workerId)).size, 4, 'each process leased its own worker ID')
  const all = results.flatMap((r) => r.ids)
  assert.equal(all.length, 200000)
  assert.equal(new Set(all).size, all.length)
  for (const r of results) for (const id of r.ids.slice(0, 10)) assert.equal(rf.decode(id).workerId, r.workerId)
})

function libfaketime() {
  if (process.env.FAKETIME_LIB) return process.env.FAKETIME_LIB
  const dirs = ['/usr/lib/faketime', '/usr/local/lib/faketime', '/usr/lib64/faketime']
  for (const d of fs.existsSync('/usr/lib') ? fs.readdirSync('/usr/lib') : []) dirs.push(path.join('/usr/lib', d, 'faketime'))
  for (const d of dirs) for (const name of ['libfaketimeMT.so.1', 'libfaketime.so.1']) if (fs.existsSync(path.join(d, name))) return path.join(d, name)
  return null
}

test('restart with the clock set back by an hour (libfaketime): no ID repeats', (t) => {
  const lib = libfaketime()
  assert.ok(lib, 'libfaketime is missing: `make test-node` installs it (apt-get install faketime), or set FAKETIME_LIB')
  const state = path.join(tempDir(), 'state')
  const src = `
    const rf = require(${JSON.stringify(root)})
    const gen = new rf.Generator()
    const ids = gen.nextIds(20000)
    process.stdout.write(JSON.stringify({ now: Date.now(), workerId: gen.workerId, ids: Array.from(ids, String) }))
    gen.close()`
  const runOnce = (back) => {
    const env = { ...process.env, RIMEFLAKE_STATE_DIR: state }
    if (back) Object.assign(env, { LD_PRELOAD: lib, FAKETIME: back, FAKETIME_DONT_FAKE_MONOTONIC: '1' })
    const r = spawnSync(process.execPath, ['-e', src], { env, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    return JSON.parse(r.stdout)
  }
  const first = runOnce(null)
  const second = runOnce('-3600')
  // libfaketime must really move the clock, or this test proves nothing.
  const behind = Date.now() - second.now
  assert.ok(behind > 3_500_000 && behind < 3_700_000, `the child's clock is ${behind} ms behind, not an hour: is ${lib} libfaketime?`)
  assert.equal(second.workerId, first.workerId, 'the restart took the same worker ID (the only one free in its state)')
  const all = new Set([...first.ids, ...second.ids])
  assert.equal(all.size, 40000)
  // The restart continued above the first life: it switched clock-id rather than reuse time.
  assert.ok(BigInt(second.ids[0]) > BigInt(first.ids.at(-1)))
  t.diagnostic(`clock-id after the restart: ${rf.decode(second.ids[0]).clockId}`)
})
