// Uses every export of rimeflake/drizzle with drizzle-orm, checked by `tsc --noEmit --strict`
// (test/types.test.js): the mode decides the type a column's rows read as.
import type { InferInsertModel, InferSelectModel } from 'drizzle-orm'
import { mysqlTable } from 'drizzle-orm/mysql-core'
import { pgTable, text } from 'drizzle-orm/pg-core'
import { sqliteTable } from 'drizzle-orm/sqlite-core'
import { Generator } from 'rimeflake'
import { mysqlSnowflake, pgSnowflake, type SnowflakeMode, type SnowflakeOptions, sqliteSnowflake } from 'rimeflake/drizzle'

const gen = new Generator({ backend: 'memory', workerId: 1 })
const mode: SnowflakeMode = 'string'
const stringOptions: SnowflakeOptions<'string'> = { mode, generator: gen }
const users = pgTable('users', { id: pgSnowflake('id').primaryKey(), ref: pgSnowflake('ref', stringOptions), name: text('name') })
type User = InferSelectModel<typeof users>
const user: User = { id: 1n, ref: '2', name: null }
const newUser: InferInsertModel<typeof users> = { name: 'no id: the generator fills it' }
const events = sqliteTable('events', { id: sqliteSnowflake({ generator: gen }).primaryKey() })
const event: InferSelectModel<typeof events> = { id: 3n }
const orders = mysqlTable('orders', { id: mysqlSnowflake({ mode: 'string' }).primaryKey() })
const order: InferSelectModel<typeof orders> = { id: '4' }
// @ts-expect-error a string-mode column reads as a string, not a bigint
const wrong: InferSelectModel<typeof orders> = { id: 4n }

export { event, newUser, order, user, wrong }
