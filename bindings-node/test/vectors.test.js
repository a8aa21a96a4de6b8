'use strict'
// The shared vectors (testdata/vectors.json): every 64-bit number there is a decimal string.
const test = require('node:test')
const assert = require('node:assert/strict')
const { rf, vectors } = require('./support')

const ENCODINGS = ['dec', 'hex', 'base62', 'base32']
const CLASS_OF = Object.fromEntries(rf._errorKinds().map(([name, , cls]) => [name, rf[cls]]))
const data = vectors()

// Vector parts (decimal strings) as the binding's parts (Numbers); datacenterId only where the
// layout names a datacenter part.
function partsOf(p) {
  const parts = { clockId: Number(p.clock_id), timestampMs: Number(p.timestamp_ms), workerId: Number(p.worker_id), sequence: Number(p.sequence) }
  if (p.datacenter_id !== undefined && p.datacenter_id !== null) parts.datacenterId = Number(p.datacenter_id)
  return parts
}

function layoutOf(entry) {
  return entry.preset === 'baidu' ? rf.Layout.baidu(Number(entry.epoch_ms)) : new rf.Layout(entry.preset)
}

const SPEC_ORDER = { sequence_below_worker: 'worker_first', sequence_above_worker: 'sequence_first' }

test('order reads as the layout spec writes it', () => {
  const twitter = new rf.Layout('twitter')
  assert.equal(twitter.order, 'worker_first')
  assert.match(twitter.toString(), /,order=worker_first$/)
  const spec = 'clock_id=0,time=39,worker=16,sequence=8,unit_ms=10,epoch_ms=1409529600000,order=sequence_first'
  assert.equal(new rf.Layout(spec).order, 'sequence_first')
  // The long name is read too, and shown as the spec word.
  assert.equal(new rf.Layout(spec.replace('sequence_first', 'sequence_above_worker')).order, 'sequence_first')
})

test('presets and their fields', () => {
  assert.equal(data.version, 1)
  assert.deepEqual(data.layouts.map((e) => e.preset), rf.Layout.presets())
  for (const entry of data.layouts) {
    const l = layoutOf(entry)
    const f = entry.fields
    assert.deepEqual([l.clockIdBits, l.timeBits, l.workerBits, l.sequenceBits], [f.clock_id_bits, f.time_bits, f.worker_bits, f.sequence_bits])
    // The order as the layout spec writes it (the vectors use the core's long names).
    assert.equal(l.order, SPEC_ORDER[f.order])
    assert.ok(l.toString().endsWith(`,order=${l.order}`), l.toString())
    assert.equal(l.unitMs, f.unit_ms)
    assert.equal(l.isJsSafe, f.js_safe)
    assert.equal(l.totalBits, f.total_bits)
    assert.equal(BigInt(l.epochMs), BigInt(entry.epoch_ms))
    assert.equal(BigInt(l.expiresAtMs), BigInt(entry.expires_at_ms))
    assert.equal(l.fingerprint, BigInt(entry.fingerprint))
    assert.deepEqual([l.maxClockId, l.maxTime, l.maxWorkerId, l.maxSequence].map(BigInt), [entry.max.clock_id, entry.max.time, entry.max.worker_id, entry.max.sequence].map(BigInt))
  }
})

test('cases compose, decode and encode', () => {
  let count = 0
  for (const entry of data.layouts) {
    const l = layoutOf(entry)
    for (const c of entry.cases) {
      const id = BigInt(c.id)
      const parts = partsOf(c.parts)
      assert.equal(l.compose(parts), id, c.name)
      const d = l.decode(id)
      const got = { clockId: d.clockId, timestampMs: d.timestampMs, workerId: d.workerId, sequence: d.sequence }
      if (d.datacenterId !== undefined && d.datacenterId !== null) got.datacenterId = d.datacenterId
      assert.deepEqual(got, parts, c.name)
      assert.equal(d.date.getTime(), parts.timestampMs)
      // The same ID as a decimal string decodes alike (the JSON form).
      assert.deepEqual(l.decode(c.id), d)
      if (entry.preset !== 'baidu') assert.deepEqual(rf.decode(id, entry.preset), d)
      for (const e of ENCODINGS) {
        assert.equal(rf.format(id, e), c.encodings[e])
        assert.equal(rf.parse(c.encodings[e], e), id)
      }
      count++
    }
  }
  assert.ok(count > 0)
})

test('invalid IDs and parts throw the kind the vectors name', () => {
  for (const entry of data.layouts) {
    const l = layoutOf(entry)
    for (const bad of entry.invalid_ids) {
      assert.throws(() => l.decode(BigInt(bad.id)), CLASS_OF[bad.error], bad.why)
    }
    for (const bad of entry.invalid_parts) {
      assert.throws(() => l.compose(partsOf(bad.parts)), CLASS_OF[bad.error], bad.why)
    }
  }
  for (const bad of data.invalid_layouts) {
    const make = () => (bad.preset === 'baidu' && bad.epoch_ms !== null ? rf.Layout.baidu(Number(bad.epoch_ms)) : new rf.Layout(bad.preset))
    if (bad.epoch_ms !== null && Number(bad.epoch_ms) > Number.MAX_SAFE_INTEGER) {
      assert.throws(make, RangeError, bad.why)
    } else {
      assert.throws(make, CLASS_OF[bad.error], bad.why)
    }
  }
})

test('layout specs: parsed by the core, described, and read back', () => {
  for (const v of data.layout_specs) {
    if (v.error) {
      assert.throws(() => new rf.Layout(v.spec), CLASS_OF[v.error], v.why)
      continue
    }
    const l = new rf.Layout(v.spec)
    assert.equal(l.name, v.name, v.why)
    assert.equal(l.describe(), v.describe, v.why)
    assert.ok(new rf.Layout(l.describe()).equals(l), v.why)
    // A spec works wherever a layout does.
    assert.deepEqual(rf.decode(1n, v.spec), l.decode(1n))
  }
})

test('encodings round trip, sort, accept aliases and refuse garbage', () => {
  const enc = data.encodings
  for (const row of enc.round_trip) {
    for (const e of ENCODINGS) {
      assert.equal(rf.format(BigInt(row.id), e), row[e])
      assert.equal(rf.parse(row[e], e), BigInt(row.id))
    }
  }
  for (const e of ['hex', 'base62', 'base32']) {
    const texts = enc.round_trip.map((r) => r[e])
    assert.deepEqual(texts, [...texts].sort())
  }
  for (const a of enc.aliases) assert.equal(rf.parse(a.text, a.encoding), BigInt(a.id), a.why)
  for (const bad of enc.invalid) {
    assert.throws(() => rf.parse(bad.text, bad.encoding), (e) => e instanceof CLASS_OF[bad.error] && e.code === `ERR_RIMEFLAKE_${bad.error}`, bad.why)
  }
})
