'use strict'
// A backend URL from Node: worker IDs leased from a real Redis, started by scripts/with-redis
// (which `make test-node` runs the tests under).
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn, spawnSync } = require('node:child_process')
const { once } = require('node:events')
const { rf, root } = require('./support')

function redisUrl() {
  const url = process.env.RIMEFLAKE_TEST_REDIS_URL
  assert.ok(url, 'RIMEFLAKE_TEST_REDIS_URL is not set: run `make test-node` (it starts redis-server) or `scripts/with-redis node --test test/`')
  return url
}

test('generators lease distinct worker IDs from Redis, and the state stays there', () => {
  const url = redisUrl()
  const a = new rf.Generator({ backend: url, namespace: 'node-many' })
  const b = new rf.Generator({ backend: url, namespace: 'node-many' })
  assert.notEqual(a.workerId, b.workerId)
  assert.ok(Math.abs(a.stats().serverSkewMs) < 1000) // the server runs on this host
  const ids = new Set()
  let last = 0n
  for (let i = 0; i < 1000; i++) ids.add((last = a.nextId()))
  for (let i = 0; i < 1000; i++) ids.add(b.nextId())
  assert.equal(ids.size, 2000)
  const worker = a.workerId
  a.close()
  b.close()
  const again = new rf.Generator({ backend: url, namespace: 'node-many', workerId: worker })
  assert.ok(again.nextId() > last)
  again.close()
})

test('stats show the lease held and its renewals', async () => {
  const gen = new rf.Generator({ backend: redisUrl(), namespace: 'node-stats', leaseTtlMs: 1000 })
  assert.equal(gen.stats().lease, 'held')
  const deadline = Date.now() + 30000
  while (gen.stats().leaseRenewals < 1 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const s = gen.stats()
  assert.ok(s.leaseRenewals >= 1, JSON.stringify(s))
  assert.equal(s.leaseRenewalFailures, 0)
  assert.ok(s.leaseRemainingMs > 0 && s.leaseRemainingMs <= 1000, JSON.stringify(s))
  assert.ok(s.reservationWrites >= 1, JSON.stringify(s))
  gen.close()
})

test('a held worker ID and a bad URL are typed errors without the password', () => {
  const url = redisUrl()
  const held = new rf.Generator({ backend: url, namespace: 'node-held', workerId: 3 })
  assert.throws(() => new rf.Generator({ backend: url, namespace: 'node-held', workerId: 3 }),
    (e) => e instanceof rf.LeaseError && e.code === 'ERR_RIMEFLAKE_LEASE' && /worker ID 3/.test(e.message))
  held.close()
  assert.throws(() => new rf.Generator({ backend: 'redis://:s3cret@127.0.0.1:notaport/0' }),
    (e) => e instanceof rf.ConfigError && !e.message.includes('s3cret'))
})

test('mysql:// and zookeeper:// URLs reach their backends', () => {
  // Built in: a server that is not there is a lease error naming it, not a missing feature.
  const port = 1 // nobody listens on tcpmux
  for (const url of [`mysql://app:s3cret@127.0.0.1:${port}/ids`, `zookeeper://app:s3cret@127.0.0.1:${port}/ids`]) {
    assert.throws(() => new rf.Generator({ backend: url }),
      (e) => e instanceof rf.LeaseError && e.message.includes(`127.0.0.1:${port}`) && !e.message.includes('s3cret'))
  }
  assert.throws(() => new rf.Generator({ backend: 'mysql://app:s3cret@db/ids?ssl-mode=sometimes' }),
    (e) => e instanceof rf.ConfigError && /ssl-mode/.test(e.message) && !e.message.includes('s3cret'))
})

test('leaseTtlMs: a killed holder\'s worker ID is free again after its lease', async () => {
  const url = redisUrl()
  const src = `const rf = require(${JSON.stringify(root)});
    const g = new rf.Generator({ backend: process.argv[1], namespace: 'node-ttl', workerId: 5, leaseTtlMs: 2000 });
    console.log(String(g.nextId())); setInterval(() => {}, 60000)`
  const child = spawn(process.execPath, ['-e', src, url], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const [first] = await once(child.stdout, 'data')
    assert.ok(BigInt(String(first).trim()) > 0n)
    assert.throws(() => new rf.Generator({ backend: url, namespace: 'node-ttl', workerId: 5 }),
      (e) => e instanceof rf.LeaseError && /worker ID 5/.test(e.message))
    child.kill('SIGKILL') // no release: the lease must run out
    await once(child, 'exit')
    // The default TTL would keep it 10 s; this one, 2 s.
    const deadline = Date.now() + 8000
    for (;;) {
      try {
        const g = new rf.Generator({ backend: url, namespace: 'node-ttl', workerId: 5 })
        assert.ok(g.nextId() > 0n)
        g.close()
        break
      } catch (e) {
        assert.ok(e instanceof rf.LeaseError, String(e))
        assert.ok(Date.now() < deadline, 'worker ID 5 still held 8 s after the kill')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  } finally {
    child.kill('SIGKILL')
  }
  assert.throws(() => new rf.Generator({ backend: url, leaseTtlMs: 100 }),
    (e) => e instanceof rf.ConfigError && /^leaseTtlMs: /.test(e.message))
  assert.throws(() => new rf.Generator({ backend: url, leaseTtlMs: -1 }), RangeError)
})

test('TLS: a rediss:// URL checks the server\'s certificate', () => {
  const url = process.env.RIMEFLAKE_TEST_REDISS_URL
  assert.ok(url, 'RIMEFLAKE_TEST_REDISS_URL is not set: run the tests under scripts/with-redis')
  const g = new rf.Generator({ backend: url, namespace: 'node-tls' })
  assert.ok(g.nextId() > 0n)
  g.close()
  // Without the test CA (sslrootcert=), the system's CAs do not vouch for the server.
  assert.throws(() => new rf.Generator({ backend: url.split('?')[0], namespace: 'node-tls' }),
    (e) => e instanceof rf.ConfigError && /not trusted/.test(e.message))
})

test('a child process pointed at Redis by RIMEFLAKE_BACKEND takes a worker ID of its own', () => {
  const url = redisUrl()
  const mine = new rf.Generator({ backend: url, namespace: 'node-env' })
  const src = `const rf = require(${JSON.stringify(root)}); const g = new rf.Generator({ namespace: 'node-env' }); console.log(g.workerId); g.close()`
  const r = spawnSync(process.execPath, ['-e', src], { env: { ...process.env, RIMEFLAKE_BACKEND: url }, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.notEqual(Number(r.stdout.trim()), mine.workerId)
  mine.close()
})

test('worker threads share one Redis lease through Generator.shared, and the last close frees it at once', async () => {
  const { Worker } = require('node:worker_threads')
  const url = redisUrl()
  const THREADS = 4
  const PER = 50_000
  const opts = { backend: url, namespace: 'node-threads' } // default layout: no datacenter part
  const shared = new SharedArrayBuffer(THREADS * PER * 8)
  // Held here for the whole run: a thread that finished before another started would otherwise
  // have closed the last reference, and the next one would lease again (from a random start).
  const mine = rf.Generator.shared(opts)
  const src = `
    const { workerData } = require('node:worker_threads')
    const rf = require(workerData.root)
    const gen = rf.Generator.shared(workerData.opts)
    const out = new BigUint64Array(workerData.shared, workerData.index * workerData.per * 8, workerData.per)
    for (let i = 0; i < workerData.per; i++) out[i] = gen.nextId()`
  const run = (index) => new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { root, opts, shared, index, per: PER } })
    w.on('error', reject)
    w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exited with ${code}`))))
  })
  await Promise.all(Array.from({ length: THREADS }, (_, index) => run(index)))
  const all = new BigUint64Array(shared)
  const sorted = all.slice().sort()
  for (let i = 1; i < sorted.length; i++) assert.notEqual(sorted[i - 1], sorted[i], 'an ID issued twice')
  const workers = new Set(Array.from(all, (id) => rf.decode(id).workerId))
  assert.deepEqual([...workers], [mine.workerId], 'every thread used the one shared lease')
  // The threads exited without close(); the last reference's close releases the lease on the
  // server: taken again at once, well within its TTL, and it continues above every ID issued.
  const worker = mine.workerId
  mine.close()
  const again = new rf.Generator({ ...opts, workerId: worker })
  assert.ok(again.nextId() > sorted[sorted.length - 1])
  again.close()
})
