'use strict'
// Errors and warnings in Node's words: options by their keys (workerId, onRollback), rollback
// policies as the strings onRollback takes, and what decode assumed when no layout was given.
const test = require('node:test')
const assert = require('node:assert/strict')
const { rf } = require('./support')

function configError(options) {
  try {
    new rf.Generator(options).close()
  } catch (e) {
    assert.equal(e.code, 'ERR_RIMEFLAKE_CONFIG', e.message)
    return e.message
  }
  assert.fail(`no error for ${JSON.stringify(options)}`)
}

test('settings and policies are named as Node spells them', () => {
  assert.equal(
    configError({ layout: 'twitter', backend: 'memory', workerId: 1, onRollback: 'bump' }),
    "onRollback: 'bump' needs clock-id bits, and layout twitter has none; use 'wait' or 'error'",
  )
  assert.equal(
    configError({ backend: 'memory', workerId: 1, onRollback: 'later' }),
    "onRollback: unknown policy \"later\"; use 'bump', 'wait' or 'error'",
  )
  const saved = process.env.RIMEFLAKE_WORKER_ID
  delete process.env.RIMEFLAKE_WORKER_ID
  try {
    assert.equal(
      configError({ backend: 'memory' }),
      'workerId: an in-memory generator needs a fixed worker ID: give workerId, or set RIMEFLAKE_WORKER_ID',
    )
  } finally {
    if (saved !== undefined) process.env.RIMEFLAKE_WORKER_ID = saved
  }
  assert.match(configError({ backend: 'memory', workerId: 99999 }), /\(from workerId\)/)
  assert.match(configError({ workerId: 1, stateDir: '' }), /^stateDir: empty/)
})

test('decode without a layout says what it assumed, as a RimeflakeWarning', async () => {
  const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 1 })
  const id = gen.nextId()
  gen.close()
  const own = new rf.Generator({ backend: 'memory', workerId: 1 })
  const ownId = own.nextId()
  own.close()

  const seen = []
  const listen = (w) => seen.push(w)
  process.on('warning', listen)
  try {
    const parts = rf.decode(id)
    assert.ok(parts.timestampMs > rf.decode(id, 'twitter').timestampMs)
    rf.decode(ownId) // an ID of the default layout: nothing to say
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('warning', listen)
  }
  const ours = seen.filter((w) => w.name === 'RimeflakeWarning')
  assert.equal(ours.length, 1, JSON.stringify(ours.map((w) => w.message)))
  assert.equal(ours[0].code, 'RIMEFLAKE_ASSUMED_LAYOUT')
  assert.ok(
    ours[0].message.startsWith(`${id} was read with the default layout, as no layout was given: by it, `),
    ours[0].message,
  )
  assert.ok(ours[0].message.endsWith("try layout 'twitter'"), ours[0].message)
})
