'use strict'
// rimeflake/drizzle: a Drizzle column that stores a rimeflake ID as a 64-bit integer (BIGINT on
// PostgreSQL and MySQL, INTEGER on SQLite), reads it back exactly, as a bigint or as a decimal
// string, and fills it from a generator ($defaultFn) when a row is inserted without one.
//
//   const { pgSnowflake } = require('rimeflake/drizzle')
//   const users = pgTable('users', { id: pgSnowflake('id').primaryKey(), name: text('name') })

const { defaultGenerator, generatorOption, need, toBigInt } = require('./integration.js')

const WHERE = 'rimeflake/drizzle'
const MODES = ['bigint', 'string']

// Drizzle's convention: the column name is optional, then the options.
function nameAndOptions(a, b, fn) {
  if (typeof a === 'string') return [a, b]
  if (b !== undefined) throw new TypeError(`${fn}: the column name comes first: ${fn}(name, options)`)
  return ['', a]
}

// `toDriver` of a dialect: what its drivers take for a 64-bit integer exactly.
const asString = (id) => id.toString()
const asBigInt = (id) => id

function column(fn, dialect, dataType, driverValue, a, b) {
  const [name, options] = nameAndOptions(a, b, fn)
  const generator = generatorOption(options, fn)
  const mode = (options && options.mode) ?? 'bigint'
  if (!MODES.includes(mode)) throw new TypeError(`${fn}: mode must be 'bigint' or 'string', not ${String(mode)}`)
  const read = mode === 'string' ? (v) => toBigInt(v, WHERE).toString() : (v) => toBigInt(v, WHERE)
  const { customType } = need(`drizzle-orm/${dialect}-core`, WHERE, 'drizzle-orm')
  const type = customType({
    dataType: () => dataType,
    toDriver: (value) => driverValue(toBigInt(value, WHERE)),
    fromDriver: read,
  })
  const next =
    mode === 'string'
      ? () => (generator ?? defaultGenerator()).nextIdString()
      : () => (generator ?? defaultGenerator()).nextId()
  return type(name).$defaultFn(next)
}

// node-postgres and postgres.js take a decimal string for BIGINT, and return one by default.
function pgSnowflake(a, b) {
  return column('pgSnowflake', 'pg', 'bigint', asString, a, b)
}

// mysql2 takes a decimal string; it returns BIGINT exactly with supportBigNumbers and
// bigNumberStrings (a Number past 2^53 is refused on reading, as it has lost digits).
function mysqlSnowflake(a, b) {
  return column('mysqlSnowflake', 'mysql', 'bigint', asString, a, b)
}

// SQLite's drivers take a bigint; @libsql/client returns one with intMode: 'bigint',
// better-sqlite3 with safeIntegers().
function sqliteSnowflake(a, b) {
  return column('sqliteSnowflake', 'sqlite', 'integer', asBigInt, a, b)
}

module.exports = { pgSnowflake, mysqlSnowflake, sqliteSnowflake }
