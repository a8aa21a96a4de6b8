'use strict'
// Errors: every core kind maps to a class with a stable code; arguments of a wrong type throw
// TypeError, numbers out of range RangeError, each naming the argument.
const test = require('node:test')
const assert = require('node:assert/strict')
const { rf } = require('./support')

const CODES = {
  CONFIG: ['ConfigError', 'ERR_RIMEFLAKE_CONFIG'],
  CLOCK_ROLLBACK: ['ClockRollbackError', 'ERR_RIMEFLAKE_CLOCK_ROLLBACK'],
  LEASE: ['LeaseError', 'ERR_RIMEFLAKE_LEASE'],
  NO_FREE_WORKER: ['NoFreeWorkerError', 'ERR_RIMEFLAKE_NO_FREE_WORKER'],
  STATE: ['StateError', 'ERR_RIMEFLAKE_STATE'],
  INVALID_ID: ['InvalidIdError', 'ERR_RIMEFLAKE_INVALID_ID'],
  CLOSED: ['ClosedError', 'ERR_RIMEFLAKE_CLOSED'],
  TIME_RANGE: ['TimeRangeError', 'ERR_RIMEFLAKE_TIME_RANGE'],
  OVERLOADED: ['OverloadedError', 'ERR_RIMEFLAKE_OVERLOADED'],
  INTERRUPTED: ['InterruptedWaitError', 'ERR_RIMEFLAKE_INTERRUPTED'],
}

test('every kind of the core maps to its own class and code', () => {
  // _errorKinds and _throwKind exist only in a build with the internals feature (make node-env).
  assert.equal(typeof rf._errorKinds, 'function', 'the addon was built without --features internals: run make node-env')
  const kinds = rf._errorKinds()
  assert.deepEqual(kinds.map(([name]) => name).sort(), Object.keys(CODES).sort(), 'a kind of the core is missing here or there')
  for (const [name, code, cls] of kinds) {
    assert.deepEqual([cls, code], CODES[name], name)
    assert.equal(typeof rf[cls], 'function', cls)
    assert.throws(() => rf._throwKind(name), (e) => {
      assert.ok(e instanceof rf[cls] && e instanceof rf.RimeflakeError && e instanceof Error)
      // No free worker ID is a lease that could not be taken (the core's ErrorKind::broader).
      assert.equal(e instanceof rf.LeaseError, cls === 'LeaseError' || cls === 'NoFreeWorkerError', cls)
      assert.equal(e.code, code)
      assert.equal(e.name, cls)
      assert.match(e.message, new RegExp(name))
      assert.ok(e.stack.includes(cls))
      return true
    })
  }
})

test('each class has one name, the one Python gives it too', () => {
  // InterruptedError was Node's first name of InterruptedWaitError: gone before the first release.
  assert.equal(rf.InterruptedError, undefined)
  assert.throws(() => rf._throwKind('INTERRUPTED'), rf.InterruptedWaitError)
})

test('errors from real failures carry their codes', () => {
  // CONFIG: a memory backend needs a worker ID; an unknown backend; a bad policy.
  assert.throws(() => new rf.Generator({ backend: 'memory' }), { code: 'ERR_RIMEFLAKE_CONFIG' })
  assert.throws(() => new rf.Generator({ backend: 'carrier-pigeon' }), (e) => e instanceof rf.ConfigError && /backend/.test(e.message))
  assert.throws(() => new rf.Generator({ backend: 'memory', workerId: 1, onRollback: 'panic' }), rf.ConfigError)
  assert.throws(() => new rf.Generator({ backend: 'memory', workerId: 1024 }), rf.ConfigError)
  // NO_FREE_WORKER: js_safe has 8 worker IDs in one namespace.
  const held = []
  for (let i = 0; i < 8; i++) held.push(new rf.Generator({ layout: 'js_safe', namespace: 'full' }))
  assert.throws(() => new rf.Generator({ layout: 'js_safe', namespace: 'full' }), { code: 'ERR_RIMEFLAKE_NO_FREE_WORKER' })
  // LEASE: a fixed worker ID that another generator holds.
  const w = held[0].workerId
  assert.throws(() => new rf.Generator({ layout: 'js_safe', namespace: 'full', workerId: w }), (e) => e.code === 'ERR_RIMEFLAKE_LEASE' || e.code === 'ERR_RIMEFLAKE_NO_FREE_WORKER')
  for (const g of held) g.close()
  // INVALID_ID and CLOSED are in the conversions test and generator tests.
})

test('conversions at the edges', () => {
  const id = (v) => () => rf.decode(v)
  // 2^53 - 1 as a Number is fine; 2^53 is not exact as a Number: RangeError naming `id`.
  assert.equal(rf.decode(2 ** 53 - 1).sequence >= 0, true)
  assert.throws(id(2 ** 53), (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE' && /^id /.test(e.message))
  // 2^63 - 1 is the largest ID; 2^63 sets the sign bit.
  assert.equal(typeof rf.decode(2n ** 63n - 1n).workerId, 'number')
  assert.equal(typeof rf.decode(String(2n ** 63n - 1n)).workerId, 'number')
  assert.throws(id(2n ** 63n), (e) => e instanceof rf.InvalidIdError && /2\^63/.test(e.message))
  assert.throws(id(String(2n ** 63n)), rf.InvalidIdError)
  assert.throws(id(2n ** 64n), rf.InvalidIdError)
  // -1 in every form.
  assert.throws(id(-1n), (e) => e instanceof rf.InvalidIdError && /negative/.test(e.message))
  assert.throws(id(-1), RangeError)
  assert.throws(id('-1'), rf.InvalidIdError)
  // 1.5, NaN, Infinity: not integers.
  for (const v of [1.5, NaN, Infinity, -0.5]) assert.throws(id(v), (e) => e instanceof RangeError && /id/.test(e.message), String(v))
  // Garbage strings and wrong types.
  for (const v of ['', 'abc', '12a', ' 1', '0x10', '1e3']) assert.throws(id(v), rf.InvalidIdError, JSON.stringify(v))
  for (const v of [null, undefined, {}, [], true, Symbol('x')]) assert.throws(id(v), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE' && /^id must be/.test(e.message), String(v))
  // format covers the whole u64 range; parse returns bigints.
  assert.equal(rf.format(2n ** 64n - 1n, 'hex'), 'ffffffffffffffff')
  assert.throws(() => rf.format(2n ** 64n), rf.InvalidIdError)
  assert.throws(() => rf.format(1n, 'base64'), rf.ConfigError)
  assert.throws(() => rf.format(1n, 64), (e) => e instanceof TypeError && /encoding/.test(e.message))
  assert.throws(() => rf.parse(12), (e) => e instanceof TypeError && /text/.test(e.message))
})

test('options and counts: TypeError and RangeError naming the argument', () => {
  const make = (o) => () => new rf.Generator(o)
  assert.throws(make({ backend: 'memory', workerId: '1' }), (e) => e instanceof TypeError && /options\.workerId/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1.5 }), (e) => e instanceof RangeError && /options\.workerId/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: -1 }), (e) => e instanceof RangeError && /options\.workerId/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1, maxWaitMs: NaN }), (e) => e instanceof RangeError && /options\.maxWaitMs/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1, maxDriftMs: '5' }), (e) => e instanceof TypeError && /options\.maxDriftMs/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1, layout: 7 }), (e) => e instanceof TypeError && /options\.layout/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1, layout: {} }), (e) => e instanceof TypeError && /options\.layout/.test(e.message))
  assert.throws(make({ backend: 'memory', workerId: 1, strictMonotonic: 'yes' }), (e) => e instanceof TypeError && /options\.strictMonotonic/.test(e.message))
  assert.throws(make({ backend: 7 }), (e) => e instanceof TypeError && /options\.backend/.test(e.message))
  const gen = new rf.Generator({ backend: 'memory', workerId: 1 })
  for (const n of [-1, 1.5, NaN, 2 ** 32]) assert.throws(() => gen.nextIds(n), (e) => e instanceof RangeError && /^n /.test(e.message), String(n))
  for (const n of ['3', 3n, undefined]) assert.throws(() => gen.nextIds(n), (e) => e instanceof TypeError && /^n /.test(e.message), String(n))
  for (const a of [new BigInt64Array(2), new Uint32Array(2), [1n], undefined]) {
    assert.throws(() => gen.fill(a), (e) => e instanceof TypeError && /^array must be a BigUint64Array/.test(e.message))
  }
  gen.close()
})

test('options: anything but a plain object, and unknown keys, are a TypeError that says what to write', () => {
  const make = (o) => () => new rf.Generator(o)
  const typeError = (pattern) => (e) => {
    assert.ok(e instanceof TypeError, String(e))
    assert.equal(e.code, 'ERR_INVALID_ARG_TYPE')
    assert.match(e.message, pattern)
    return true
  }
  // A misspelt key names itself and the option it is closest to.
  assert.throws(make({ workerID: 3 }), typeError(/^options: unknown option 'workerID'; did you mean 'workerId'\?$/))
  assert.throws(make({ worker_id: 3 }), typeError(/unknown option 'worker_id'; did you mean 'workerId'\?/))
  assert.throws(make({ layuot: 'twitter' }), typeError(/unknown option 'layuot'; did you mean 'layout'\?/))
  assert.throws(make({ statedir: '/tmp' }), typeError(/unknown option 'statedir'; did you mean 'stateDir'\?/))
  assert.throws(() => rf.Generator.shared({ maxWait: 5 }), typeError(/unknown option 'maxWait'; did you mean 'maxWaitMs'\?/))
  // Nothing near: the list of options, the core table's (types.test.js holds it to index.d.ts).
  assert.throws(make({ foo: 1 }), typeError(/^options: unknown option 'foo'; the options are workerId, layout, namespace, (\w+, )*\w+$/))
  // Known keys with a wrong key beside them: still refused, before anything is built.
  assert.throws(make({ backend: 'memory', workerId: 1, onRollbak: 'wait' }), typeError(/'onRollbak'; did you mean 'onRollback'/))
  // Not an object: a string is read as the layout it probably was.
  assert.throws(make('twitter'), typeError(/^options must be an object such as \{ layout: 'twitter', workerId: 1 \}, not a string: for the layout 'twitter', pass \{ layout: 'twitter' \}$/))
  assert.throws(() => rf.Generator.shared('sonyflake'), typeError(/pass \{ layout: 'sonyflake' \}/))
  assert.throws(make(7), typeError(/^options must be an object such as .*, not a number$/))
  assert.throws(make(true), typeError(/not a boolean$/))
  assert.throws(make([{ workerId: 1 }]), typeError(/not an array$/))
  assert.throws(make(new rf.Layout('twitter')), typeError(/not a Layout: pass \{ layout: theLayout \}$/))
  // No options, undefined and null are the embedded default's options; so are undefined values.
  const gen = new rf.Generator({ backend: 'memory', workerId: 2, layout: undefined, namespace: null })
  assert.equal(gen.workerId, 2)
  gen.close()
  for (const none of [undefined, null]) new rf.Generator(none).close()
})

test('a panic in the core throws a RimeflakeError with code ERR_RIMEFLAKE_PANIC instead of aborting', () => {
  assert.equal(typeof rf._panic, 'function', 'the addon was built without --features internals: run make node-env')
  assert.throws(() => rf._panic('a test panic'), (e) => {
    assert.ok(e instanceof rf.RimeflakeError && e instanceof Error)
    assert.equal(e.code, 'ERR_RIMEFLAKE_PANIC')
    assert.equal(e.name, 'RimeflakeError')
    assert.match(e.message, /panicked \(a test panic\)/)
    return true
  })
  // The process is still here, and so is the addon.
  assert.equal(typeof new rf.Generator({ backend: 'memory', workerId: 1 }).nextId(), 'bigint')
})

test('a panic on the hot path (inside the functions installed on each generator) throws instead of aborting', () => {
  assert.equal(typeof rf._panicOnNextCall, 'function', 'the addon was built without --features internals: run make node-env')
  const gen = new rf.Generator({ backend: 'memory', workerId: 1, layout: 'js_safe' })
  assert.equal(typeof gen.nextId(), 'bigint')
  rf._panicOnNextCall(gen)
  // Each per-ID call runs the hot path first, where the test's panic waits.
  for (const call of [() => gen.nextId(), () => gen.nextIdString(), () => gen.nextIdNumber(), () => gen.nextIds(2), () => gen.fill(new BigUint64Array(2))]) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof rf.RimeflakeError, String(e))
      assert.equal(e.code, 'ERR_RIMEFLAKE_PANIC')
      assert.match(e.message, /panicked \(a test's panic on the hot path/)
      return true
    })
  }
  // The prototype's twins are #[napi] methods, under napi-rs's guard: an Error too, no abort.
  for (const name of ['nextId', 'nextIdString', 'nextIdNumber']) {
    assert.throws(() => rf.Generator.prototype[name].call(gen), (e) => e instanceof Error && /test's panic/.test(e.message))
  }
  gen.close()
  // The process is still here, and so is the addon.
  assert.equal(typeof new rf.Generator({ backend: 'memory', workerId: 2 }).nextIdString(), 'string')
})
