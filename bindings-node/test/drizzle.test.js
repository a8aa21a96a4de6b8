'use strict'
// rimeflake/drizzle against the real drizzle-orm (pinned in package.json): on a real PostgreSQL
// (scripts/with-postgres starts it; node-postgres talks to it) and on SQLite (@libsql/client, a
// file), rows get the generator's IDs, read back exactly as bigint or string, also when four
// worker threads insert at once. MySQL has no server here: its column's SQL and parameters are
// checked through drizzle's MySQL query builder.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { eq, sql } = require('drizzle-orm')
const { pgTable, text, getTableConfig: pgConfig } = require('drizzle-orm/pg-core')
const { sqliteTable, text: sqliteText } = require('drizzle-orm/sqlite-core')
const { mysqlTable, QueryBuilder: MySqlQueryBuilder, getTableConfig: mysqlConfig } = require('drizzle-orm/mysql-core')
const { rf, root, tempDir, postgresUrl, inThreads, increasing } = require('./support')
const { pgSnowflake, mysqlSnowflake, sqliteSnowflake } = require('../drizzle.js')

const TOP = (1n << 63n) - 1n

// The same checks on each database: `open(gen, name, file)` makes table `name` (in SQLite's
// `file`), unless `keep`, and gives drizzle on it, the table with `gen` filling its IDs, and
// close().
const DATABASES = {
  postgresql: async (gen, name, _file, { keep = false } = {}) => {
    const { Pool } = require('pg')
    const { drizzle } = require('drizzle-orm/node-postgres')
    const pool = new Pool({ connectionString: postgresUrl(), max: 4 })
    const table = pgTable(name, {
      id: pgSnowflake('id', { generator: gen }).primaryKey(),
      ref: pgSnowflake('ref', { mode: 'string', generator: gen }),
      note: text('note'),
    })
    if (!keep) await pool.query(`DROP TABLE IF EXISTS ${name}; CREATE TABLE ${name} (id bigint PRIMARY KEY, ref bigint NOT NULL UNIQUE, note text)`)
    return { db: drizzle(pool), table, close: () => pool.end() }
  },
  sqlite: async (gen, name, file = path.join(tempDir(), 'test.db'), { keep = false } = {}) => {
    const { createClient } = require('@libsql/client')
    const { drizzle } = require('drizzle-orm/libsql')
    const client = createClient({ url: `file:${file}`, intMode: 'bigint' })
    const table = sqliteTable(name, {
      id: sqliteSnowflake('id', { generator: gen }).primaryKey(),
      ref: sqliteSnowflake('ref', { mode: 'string', generator: gen }),
      note: sqliteText('note'),
    })
    if (!keep) await client.execute(`CREATE TABLE ${name} (id integer PRIMARY KEY, ref integer NOT NULL UNIQUE, note text)`)
    return { db: drizzle(client), table, close: () => client.close() }
  },
}

for (const [kind, open] of Object.entries(DATABASES)) {
  test(`${kind}: inserts fill the IDs, which read back exactly as bigint and string`, async () => {
    const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 11 })
    const { db, table, close } = await open(gen, 'orders_fill')
    try {
      const [one] = await db.insert(table).values({ note: 'one' }).returning()
      assert.equal(typeof one.id, 'bigint')
      assert.equal(typeof one.ref, 'string')
      assert.equal(gen.decode(one.id).workerId, 11)
      assert.ok(BigInt(one.ref) > one.id)
      const many = await db.insert(table).values(Array.from({ length: 100 }, (_, i) => ({ note: `n${i}` }))).returning()
      assert.equal(new Set(many.map((r) => r.id)).size, 100)
      // An ID past 2^53 (every ID of today is) and the largest one: exact both ways.
      await db.insert(table).values({ id: TOP, ref: String(TOP - 1n), note: 'top' })
      const [top] = await db.select().from(table).where(eq(table.id, TOP))
      assert.deepEqual([top.id, top.ref], [TOP, String(TOP - 1n)])
      const [again] = await db.select().from(table).where(eq(table.ref, one.ref))
      assert.equal(again.id, one.id)
      const all = await db.select().from(table)
      assert.equal(all.length, 102)
      const text = await db.select({ id: sql`CAST(${table.id} AS TEXT)` }).from(table).orderBy(table.id)
      assert.deepEqual(text.map((r) => BigInt(r.id)), all.map((r) => r.id).sort((a, b) => (a < b ? -1 : 1)))
    } finally {
      await close()
      gen.close()
    }
  })

  test(`${kind}: 4 worker threads inserting at once get distinct increasing keys`, async () => {
    const name = 'orders_threads'
    const file = path.join(tempDir(), 'threads.db') // SQLite's: one database for the threads
    // The table, made through the same `open` (its generator never used), then left to the
    // threads, which insert with the default generator (Generator.shared()).
    const made = await open(new rf.Generator({ backend: 'memory', workerId: 1 }), name, file)
    await made.close()
    const src = `
      const { workerData, parentPort } = require('node:worker_threads')
      const { rows, kind, file, url, root, name } = workerData
      const { pgSnowflake, sqliteSnowflake } = require(root + '/drizzle.js')
      async function main() {
        let db, table, close
        if (kind === 'postgresql') {
          const { Pool } = require(root + '/node_modules/pg')
          const { drizzle } = require(root + '/node_modules/drizzle-orm/node-postgres')
          const { pgTable } = require(root + '/node_modules/drizzle-orm/pg-core')
          const pool = new Pool({ connectionString: url, max: 1 })
          table = pgTable(name, { id: pgSnowflake('id').primaryKey(), ref: pgSnowflake('ref') })
          db = drizzle(pool); close = () => pool.end()
        } else {
          const { createClient } = require(root + '/node_modules/@libsql/client')
          const { drizzle } = require(root + '/node_modules/drizzle-orm/libsql')
          const { sqliteTable } = require(root + '/node_modules/drizzle-orm/sqlite-core')
          const client = createClient({ url: 'file:' + file, intMode: 'bigint' })
          // Writers wait for each other; the file is thrown away, so nothing is synced.
          await client.execute('PRAGMA busy_timeout = 60000')
          await client.execute('PRAGMA synchronous = OFF')
          table = sqliteTable(name, { id: sqliteSnowflake('id').primaryKey(), ref: sqliteSnowflake('ref') })
          db = drizzle(client); close = () => client.close()
        }
        const ids = []
        for (let i = 0; i < rows; i++) {
          const [row] = await db.insert(table).values({}).returning({ id: table.id })
          ids.push(String(row.id))
        }
        await close()
        parentPort.postMessage(ids)
      }
      main().catch((e) => { throw e })`
    const rows = 100
    const results = await inThreads(4, src, { rows, kind, file, url: kind === 'postgresql' ? postgresUrl() : null, name })
    for (const ids of results) increasing(ids)
    const all = results.flat()
    assert.equal(new Set(all).size, 4 * rows)
    // Read back through drizzle in this thread, as bigints: the same keys, exact.
    const check = await open(new rf.Generator({ backend: 'memory', workerId: 1 }), name, file, { keep: true })
    try {
      const ids = (await check.db.select().from(check.table)).map((r) => String(r.id))
      assert.deepEqual(ids.sort(), all.sort())
    } finally {
      await check.close()
    }
  })
}

test('postgresql: a driver set to read BIGINT as Numbers is refused, with how to fix it', async () => {
  // node-postgres returns BIGINT as a string unless told otherwise, as here (drizzle reads the
  // global parsers; the tests of a file run one after another). @libsql/client without intMode
  // 'bigint' refuses such an integer on its own.
  const pg = require('pg')
  const { drizzle } = require('drizzle-orm/node-postgres')
  const bigint = pg.types.getTypeParser(20)
  pg.types.setTypeParser(20, Number)
  const pool = new pg.Pool({ connectionString: postgresUrl(), max: 1 })
  const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 5 })
  const table = pgTable('lossy', { id: pgSnowflake('id', { generator: gen }).primaryKey() })
  try {
    await pool.query('DROP TABLE IF EXISTS lossy; CREATE TABLE lossy (id bigint PRIMARY KEY)')
    const db = drizzle(pool)
    await db.insert(table).values({})
    // drizzle may report the mapping's error as the cause of its own.
    await assert.rejects(db.select().from(table), (e) => {
      const cause = e.cause ?? e
      assert.equal(cause.name, 'RangeError')
      assert.match(cause.message, /a Number past 2\^53, which has lost its low digits: read BIGINT columns as bigint or string/)
      return true
    })
  } finally {
    pg.types.setTypeParser(20, bigint)
    await pool.end()
    gen.close()
  }
})

test('the columns are 64-bit integers in every dialect; MySQL gets decimal strings', () => {
  const gen = new rf.Generator({ backend: 'memory', workerId: 6 })
  const pg = pgTable('p', { id: pgSnowflake({ generator: gen }).primaryKey() })
  assert.equal(pgConfig(pg).columns[0].getSQLType(), 'bigint')
  const my = mysqlTable('m', { id: mysqlSnowflake('id', { generator: gen }).primaryKey(), ref: mysqlSnowflake('ref', { mode: 'string' }) })
  const [id, ref] = mysqlConfig(my).columns
  assert.deepEqual([id.getSQLType(), ref.getSQLType()], ['bigint', 'bigint'])
  const query = new MySqlQueryBuilder().select().from(my).where(eq(my.id, TOP)).toSQL()
  assert.deepEqual(query.params, [String(TOP)])
  // mysql2 with bigNumberStrings reads strings; a Number that lost its digits is refused.
  assert.equal(id.mapFromDriverValue('9223372036854775807'), TOP)
  assert.equal(ref.mapFromDriverValue(12), '12')
  assert.throws(() => id.mapFromDriverValue(2 ** 60), RangeError)
  assert.equal(typeof id.defaultFn(), 'bigint')
  assert.equal(gen.decode(id.defaultFn()).workerId, 6)
  gen.close()
})

test('values that are not IDs, and bad options, are errors that name them', () => {
  const my = mysqlTable('m', { id: mysqlSnowflake('id') })
  const [id] = mysqlConfig(my).columns
  assert.throws(() => id.mapToDriverValue(-1n), { name: 'RangeError', message: /outside 0 to 2\^63 - 1/ })
  assert.throws(() => id.mapToDriverValue(1n << 63n), RangeError)
  assert.throws(() => id.mapToDriverValue('12abc'), { name: 'TypeError', message: /a bigint or a decimal string, not string 12abc/ })
  assert.throws(() => pgSnowflake('id', { mode: 'number' }), { name: 'TypeError', message: /mode must be 'bigint' or 'string'/ })
  assert.throws(() => pgSnowflake('id', { generator: 'x' }), { name: 'TypeError', message: /pgSnowflake: options.generator must be a rimeflake Generator/ })
  assert.throws(() => pgSnowflake({}, {}), { name: 'TypeError', message: /the column name comes first/ })
})

test('the ES module entry exports the same functions', async () => {
  const esm = await import(path.join(root, 'drizzle.mjs'))
  assert.deepEqual([esm.pgSnowflake, esm.mysqlSnowflake, esm.sqliteSnowflake], [pgSnowflake, mysqlSnowflake, sqliteSnowflake])
})
