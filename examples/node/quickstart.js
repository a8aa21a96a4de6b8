// The README's Node quick start (CommonJS). Run: `make example-node`.
'use strict'
const { Generator, decode, format, ClockRollbackError } = require('rimeflake')

// No options: the embedded default. A worker ID is leased in the state directory
// ($RIMEFLAKE_STATE_DIR, else ~/.local/state/rimeflake), so processes sharing it never share a
// worker ID, and a restart continues safely even when the clock was set back.
const gen = new Generator()
try {
  const a = gen.nextId() // a bigint
  const b = gen.nextId()
  console.log(`${a} < ${b}: ${a < b}`)

  // JSON has no bigint: send IDs as decimal strings (nextIdString, or String(id)).
  const order = { id: gen.nextIdString(), item: 'tea' }
  console.log(JSON.stringify(order))
  console.log('back from JSON:', decode(JSON.parse(JSON.stringify(order)).id))

  // Many at once, written straight into a typed array.
  const batch = gen.nextIds(3)
  console.log('batch:', Array.from(batch, (id) => format(id, 'base62')).join(' '))
  console.log('worker', gen.workerId, 'stats', gen.stats().idsIssued, 'IDs')
} catch (e) {
  // Every error has a stable code: branch on it, not on the message.
  if (e instanceof ClockRollbackError) console.error('the clock went back too far:', e.code)
  throw e
} finally {
  gen.close()
}
