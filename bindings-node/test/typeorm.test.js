'use strict'
// rimeflake/typeorm against the real TypeORM (pinned in package.json) on a real PostgreSQL
// (scripts/with-postgres starts it; node-postgres talks to it): save(), insert() and the query
// builder's insert fill the IDs, which read back exactly, also when four worker threads insert
// at once.
const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { DataSource, EntitySchema } = require('typeorm')
const { rf, root, postgresUrl, inThreads, increasing } = require('./support')
const { SnowflakeSubscriber, SnowflakeTransformer, snowflakeColumn } = require('../typeorm.js')

const TOP = (1n << 63n) - 1n

function schema(tableName, gen) {
  return new EntitySchema({
    name: tableName,
    tableName,
    columns: {
      id: { primary: true, ...snowflakeColumn({ generator: gen }) },
      ref: { ...snowflakeColumn({ mode: 'string', generator: gen }), unique: true },
      note: { type: 'text', nullable: true },
    },
  })
}

async function connect(entity, options = {}) {
  const ds = new DataSource({ type: 'postgres', url: postgresUrl(), entities: [entity], subscribers: [SnowflakeSubscriber], ...options })
  await ds.initialize()
  return ds
}

test('save(), insert() and the query builder fill the IDs, which read back exactly', async () => {
  const gen = new rf.Generator({ layout: 'twitter', backend: 'memory', workerId: 12 })
  const Order = schema('typeorm_orders', gen)
  const ds = await connect(Order, { synchronize: true, dropSchema: true })
  try {
    const repo = ds.getRepository(Order)
    const saved = await repo.save({ note: 'saved' })
    assert.equal(typeof saved.id, 'bigint')
    assert.equal(typeof saved.ref, 'string')
    assert.equal(gen.decode(saved.id).workerId, 12)
    await repo.insert(Array.from({ length: 50 }, (_, i) => ({ note: `i${i}` })))
    await ds.createQueryBuilder().insert().into(Order).values([{ note: 'qb1' }, { note: 'qb2' }]).execute()
    await repo.insert({ id: TOP, ref: String(TOP - 1n), note: 'top' })
    const all = await repo.find({ order: { id: 'ASC' } })
    assert.equal(all.length, 54)
    assert.equal(new Set(all.map((r) => r.id)).size, 54)
    assert.equal(all[0].id, saved.id) // made first: the smallest key
    const top = await repo.findOneBy({ id: TOP })
    assert.deepEqual([top.id, top.ref], [TOP, String(TOP - 1n)])
    const byRef = await repo.findOneBy({ ref: saved.ref })
    assert.equal(byRef.id, saved.id)
    // The column is a BIGINT: what PostgreSQL stores is the ID.
    const [row] = await ds.query('SELECT id::text AS id, pg_typeof(id)::text AS type FROM typeorm_orders WHERE note = $1', ['saved'])
    assert.deepEqual([BigInt(row.id), row.type], [saved.id, 'bigint'])
  } finally {
    await ds.destroy()
    gen.close()
  }
})

test('4 worker threads inserting at once get distinct increasing keys', async () => {
  const Order = schema('typeorm_threads')
  const ds = await connect(Order, { synchronize: true, dropSchema: true })
  const rows = 100
  const src = `
    const { workerData, parentPort } = require('node:worker_threads')
    const { root, url, rows } = workerData
    const { DataSource, EntitySchema } = require(root + '/node_modules/typeorm')
    const { SnowflakeSubscriber, snowflakeColumn } = require(root + '/typeorm.js')
    const Order = new EntitySchema({ name: 'typeorm_threads', tableName: 'typeorm_threads', columns: {
      id: { primary: true, ...snowflakeColumn() },
      ref: { ...snowflakeColumn({ mode: 'string' }), unique: true },
      note: { type: 'text', nullable: true } } })
    async function main() {
      const ds = new DataSource({ type: 'postgres', url, entities: [Order], subscribers: [SnowflakeSubscriber] })
      await ds.initialize()
      const ids = []
      for (let i = 0; i < rows; i++) ids.push(String((await ds.getRepository(Order).save({ note: 'r' + i })).id))
      await ds.destroy()
      parentPort.postMessage(ids)
    }
    main().catch((e) => { throw e })`
  try {
    const results = await inThreads(4, src, { url: postgresUrl(), rows })
    for (const ids of results) increasing(ids)
    const all = results.flat()
    assert.equal(new Set(all).size, 4 * rows)
    const stored = (await ds.getRepository(Order).find()).map((r) => String(r.id))
    assert.deepEqual(stored.sort(), all.sort())
  } finally {
    await ds.destroy()
  }
})

test('the transformer refuses what is not an ID, and a Number that lost its digits', () => {
  const t = new SnowflakeTransformer()
  assert.equal(t.to(12n), '12')
  assert.equal(t.to(undefined), undefined)
  assert.equal(t.from('9223372036854775807'), TOP)
  assert.equal(new SnowflakeTransformer(undefined, 'string').from(12n), '12')
  assert.throws(() => t.from(2 ** 60), { name: 'RangeError', message: /lost its low digits/ })
  assert.throws(() => t.to(-5n), { name: 'RangeError', message: /outside 0 to 2\^63 - 1/ })
  assert.throws(() => t.to({}), { name: 'TypeError', message: /a bigint or a decimal string/ })
  assert.throws(() => new SnowflakeTransformer(undefined, 'number'), { name: 'TypeError', message: /mode must be/ })
  assert.throws(() => snowflakeColumn({ generator: 3 }), { name: 'TypeError', message: /snowflakeColumn: options.generator must be a rimeflake Generator/ })
  assert.deepEqual(Object.keys(snowflakeColumn({ comment: 'key' })).sort(), ['comment', 'transformer', 'type'])
})

test('the ES module entry exports the same classes', async () => {
  const esm = await import(path.join(root, 'typeorm.mjs'))
  assert.deepEqual([esm.SnowflakeSubscriber, esm.SnowflakeTransformer, esm.snowflakeColumn], [SnowflakeSubscriber, SnowflakeTransformer, snowflakeColumn])
})
