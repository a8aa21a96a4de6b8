// The ES module entry of rimeflake/drizzle: the same functions as drizzle.js (CommonJS).
import { createRequire } from 'node:module'

export const { pgSnowflake, mysqlSnowflake, sqliteSnowflake } = createRequire(import.meta.url)('./drizzle.js')
