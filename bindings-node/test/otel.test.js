'use strict'
// rimeflake/otel's IdGenerator in the real OpenTelemetry SDK (@opentelemetry/sdk-trace-base,
// pinned in package.json): spans exported by an in-memory exporter carry the generator's IDs,
// unique across worker threads and cluster workers, and the ratio sampler keeps the ratio asked.
const test = require('node:test')
const assert = require('node:assert/strict')
const cluster = require('node:cluster')
const fs = require('node:fs')
const path = require('node:path')
const api = require('@opentelemetry/api')
const {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} = require('@opentelemetry/sdk-trace-base')
const { rf, root, tempDir, inThreads } = require('./support')
const { IdGenerator } = require('../otel.js')

function traced(idGenerator, options = {}) {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ idGenerator, spanProcessors: [new SimpleSpanProcessor(exporter)], ...options })
  return { provider, exporter }
}

// `traces` root spans, each with one child (its parent given explicitly: the provider has no
// context manager registered).
function makeSpans(provider, traces) {
  const tracer = provider.getTracer('rimeflake-test')
  for (let i = 0; i < traces; i++) {
    const request = tracer.startSpan('request')
    tracer.startSpan('query', undefined, api.trace.setSpan(api.context.active(), request)).end()
    request.end()
  }
}

const hex = (h) => BigInt(`0x${h}`)

test('exported spans carry the generator\'s IDs: 16 and 32 lower-case hex digits', () => {
  const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 9 })
  const { provider, exporter } = traced(new IdGenerator({ generator: gen }))
  makeSpans(provider, 100)
  const spans = exporter.getFinishedSpans()
  assert.equal(spans.length, 200)
  const spanIds = new Set()
  for (const span of spans) {
    const { traceId, spanId } = span.spanContext()
    assert.match(spanId, /^[0-9a-f]{16}$/)
    assert.match(traceId, /^[0-9a-f]{32}$/)
    assert.notEqual(hex(spanId), 0n)
    assert.equal(gen.decode(hex(spanId)).workerId, 9)
    assert.equal(gen.decode(hex(traceId.slice(0, 16))).workerId, 9)
    spanIds.add(spanId)
  }
  assert.equal(spanIds.size, 200)
  const [query, request] = spans
  assert.equal(query.parentSpanContext.spanId, request.spanContext().spanId)
  assert.equal(query.spanContext().traceId, request.spanContext().traceId)
  assert.ok(hex(query.spanContext().spanId) > hex(request.spanContext().spanId))
  gen.close()
})

test('trace IDs have a rimeflake ID in the high half and random low bits', () => {
  const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 2 })
  const ids = new IdGenerator({ generator: gen })
  const n = 4000
  const traces = Array.from({ length: n }, () => ids.generateTraceId())
  const highs = traces.map((t) => hex(t.slice(0, 16)))
  for (let i = 1; i < n; i++) assert.ok(highs[i - 1] < highs[i])
  // Each of the low 64 bits is set in about half the IDs: with n = 4,000 a fair bit's count has
  // a standard deviation of about 32, and 1,600 to 2,400 fails with a probability below
  // 2·exp(-2·400²/4000) = 2·e^-80 (Hoeffding).
  const lows = traces.map((t) => hex(t.slice(16)))
  assert.equal(new Set(lows).size, n)
  for (let bit = 0n; bit < 64n; bit++) {
    const count = lows.filter((low) => (low >> bit) & 1n).length
    assert.ok(count >= 1600 && count <= 2400, `bit ${bit}: ${count} of ${n}`)
  }
  gen.close()
})

// 20,000 root spans; the SDK's TraceIdRatioBasedSampler keeps a trace when the XOR of its ID's
// four 32-bit words falls below ratio·2^32, uniform when the low 64 bits are. The random bits
// come from the operating system (nothing to seed), so each bound is wide enough never to fail
// in practice, as in the Python test: ±800 at 0.25 (Hoeffding: 2·e^-64), ±150 at 0.01
// (Chernoff, δ = 0.75 of the mean 200: 2·e^-37.5).
for (const [ratio, bound] of [[0.25, 800], [0.01, 150]]) {
  test(`the ratio sampler keeps about ${ratio} of the traces`, () => {
    const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 4 })
    const { provider, exporter } = traced(new IdGenerator({ generator: gen }), { sampler: new TraceIdRatioBasedSampler(ratio) })
    const tracer = provider.getTracer('sampled')
    const n = 20_000
    for (let i = 0; i < n; i++) tracer.startSpan('root').end()
    const kept = exporter.getFinishedSpans().length
    assert.ok(Math.abs(kept - ratio * n) <= bound, `kept ${kept} of ${n} at ${ratio}`)
    gen.close()
  })
}

// What a thread or a cluster worker runs: a tracer on the default generator (Generator.shared(),
// state in RIMEFLAKE_STATE_DIR), 2,000 traces; it reports its spans' IDs. `start(ids, work)`,
// defined by each test, calls `work` when the test says so.
const WORKER = `
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require(ROOT + '/node_modules/@opentelemetry/sdk-trace-base')
  const api = require(ROOT + '/node_modules/@opentelemetry/api')
  const { IdGenerator } = require(ROOT + '/otel.js')
  const exporter = new InMemorySpanExporter()
  const ids = new IdGenerator()
  const provider = new BasicTracerProvider({ idGenerator: ids, spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer('worker')
  start(ids, () => {
    for (let i = 0; i < 2000; i++) {
      const request = tracer.startSpan('request')
      tracer.startSpan('query', undefined, api.trace.setSpan(api.context.active(), request)).end()
      request.end()
    }
    const spans = exporter.getFinishedSpans().map((s) => s.spanContext())
    report({ workerId: ids.generator.workerId, spanIds: spans.map((c) => c.spanId), traceIds: [...new Set(spans.map((c) => c.traceId))] })
  })
`

function checkUnique(reports) {
  const spanIds = reports.flatMap((r) => r.spanIds)
  const traceIds = reports.flatMap((r) => r.traceIds)
  assert.equal(spanIds.length, reports.length * 4000)
  assert.equal(traceIds.length, reports.length * 2000)
  assert.equal(new Set(spanIds).size, spanIds.length, 'a span ID repeated')
  assert.equal(new Set(traceIds).size, traceIds.length, 'a trace ID repeated')
}

test('4 worker threads on the default generator: one lease, unique IDs', async () => {
  const src = `const ROOT = require('node:worker_threads').workerData.root
    const report = (r) => require('node:worker_threads').parentPort.postMessage(r)
    const start = (ids, work) => work()
    ${WORKER}`
  const reports = await inThreads(4, src)
  checkUnique(reports)
  assert.equal(new Set(reports.map((r) => r.workerId)).size, 1, 'the threads share the process\'s lease')
})

test('4 cluster workers on the default generator: a worker ID each, unique IDs', async () => {
  // Each worker takes its worker ID, then waits until all four hold theirs: none can take one
  // that another has let go by exiting, so the four differ.
  const dir = tempDir()
  const file = path.join(dir, 'worker.js')
  fs.writeFileSync(file, `const ROOT = ${JSON.stringify(root)}
    const report = (r) => process.send(r, () => process.exit(0))
    const start = (ids, work) => {
      ids.generator.workerId // the lease, taken now
      process.once('message', (m) => m === 'go' && work())
      process.send('ready')
    }
    ${WORKER}`)
  cluster.setupPrimary({ exec: file, silent: true })
  const workers = Array.from({ length: 4 }, () => cluster.fork())
  let ready = 0
  const reports = await Promise.all(
    workers.map((w) => new Promise((resolve, reject) => {
      w.on('message', (m) => {
        if (m !== 'ready') return resolve(m)
        if (++ready === workers.length) for (const each of workers) each.send('go')
      })
      w.on('error', reject)
      w.on('exit', (code) => code === 0 || reject(new Error(`cluster worker exited with ${code}`)))
    })),
  )
  checkUnique(reports)
  assert.equal(new Set(reports.map((r) => r.workerId)).size, 4, 'each process leases a worker ID of its own')
})

test('without a generator, the IDs come from the process\'s shared generator', async () => {
  const src = `
    const { workerData, parentPort } = require('node:worker_threads')
    const rf = require(workerData.root)
    const { IdGenerator } = require(workerData.root + '/otel.js')
    const ids = new IdGenerator()
    const span = BigInt('0x' + ids.generateSpanId())
    const shared = rf.Generator.shared() // the same counter: its next ID is above the span's
    parentPort.postMessage([ids.generator.workerId === shared.workerId, span < shared.nextId()].join())`
  const [answer] = await inThreads(1, src)
  assert.equal(answer, 'true,true')
})

test('bad options are a TypeError that names them; a closed generator a ClosedError', () => {
  assert.throws(() => new IdGenerator('twitter'), { name: 'TypeError', message: /IdGenerator: options must be an object such as \{ generator \}, not string twitter/ })
  assert.throws(() => new IdGenerator({ generator: {} }), { name: 'TypeError', message: /options.generator must be a rimeflake Generator, not an object \(Object\)/ })
  const gen = new rf.Generator({ backend: 'memory', workerId: 1 })
  assert.throws(() => new IdGenerator(gen), { name: 'TypeError', message: /IdGenerator: pass the generator as an option: \{ generator \}/ })
  const ids = new IdGenerator({ generator: gen })
  gen.close()
  assert.throws(() => ids.generateSpanId(), rf.ClosedError)
  assert.throws(() => ids.generateTraceId(), rf.ClosedError)
})

test('the ES module entry exports the same class', async () => {
  const esm = await import(path.join(root, 'otel.mjs'))
  assert.equal(esm.IdGenerator, IdGenerator)
})
