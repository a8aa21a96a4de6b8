'use strict'
// What the integrations (rimeflake/otel, rimeflake/drizzle, rimeflake/typeorm) share: the
// generator option they take, the generator they use when given none, the library each needs,
// and how an ID crosses to and from a database driver.

const { Generator } = require('./index.js')

let fallback = null

// The process's default generator: `Generator.shared()` (every setting from the environment or
// the defaults), taken at the first ID, not when a table or a tracer is defined. Worker threads
// that use it share one lease and one counter.
function defaultGenerator() {
  if (fallback === null) fallback = Generator.shared()
  return fallback
}

// The `generator` of an integration's options: a Generator, or undefined for the default.
function generatorOption(options, where) {
  if (options === undefined || options === null) return undefined
  if (options instanceof Generator) throw new TypeError(`${where}: pass the generator as an option: { generator }`)
  if (typeof options !== 'object') {
    throw new TypeError(`${where}: options must be an object such as { generator }, not ${describe(options)}`)
  }
  const { generator } = options
  if (generator !== undefined && !(generator instanceof Generator)) {
    throw new TypeError(`${where}: options.generator must be a rimeflake Generator, not ${describe(generator)}`)
  }
  return generator
}

function describe(value) {
  if (value === null) return 'null'
  if (typeof value === 'object') return value.constructor ? `an object (${value.constructor.name})` : 'an object'
  return `${typeof value} ${String(value)}`
}

// `require(name)`, or an error that says which package to install for `where`.
function need(name, where, pkg) {
  try {
    return require(name)
  } catch (err) {
    if (err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${name}'`)) {
      const e = new Error(`${where} needs ${pkg}: npm install ${pkg} (${err.message.split('\n')[0]})`)
      e.code = 'ERR_RIMEFLAKE_PEER_NOT_FOUND'
      e.cause = err
      throw e
    }
    throw err
  }
}

const LIMIT = 1n << 63n

// An ID as a bigint, from what a caller or a driver gives: a bigint, a decimal string, or a
// Number that is still exact. Anything else, or a value outside 0 to 2^63 - 1, is an error that
// names it (a Number past 2^53 has already lost its low digits: the driver must be told to
// return 64-bit integers as bigint or string).
function toBigInt(value, where) {
  let id
  if (typeof value === 'bigint') id = value
  else if (typeof value === 'string' && /^[0-9]{1,19}$/.test(value)) id = BigInt(value)
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new RangeError(
        `${where}: the ID ${value} is a Number past 2^53, which has lost its low digits: ` +
          'read BIGINT columns as bigint or string (node-postgres and postgres.js do by default; ' +
          "@libsql/client: intMode: 'bigint'; better-sqlite3: safeIntegers(); " +
          'mysql2: supportBigNumbers and bigNumberStrings)',
      )
    }
    id = BigInt(value)
  } else {
    throw new TypeError(`${where}: an ID is a bigint or a decimal string, not ${describe(value)}`)
  }
  if (id < 0n || id >= LIMIT) throw new RangeError(`${where}: the ID ${id} is outside 0 to 2^63 - 1`)
  return id
}

module.exports = { defaultGenerator, generatorOption, need, toBigInt }
