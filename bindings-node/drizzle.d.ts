// rimeflake/drizzle: Drizzle columns that store rimeflake IDs as 64-bit integers.
import type { ColumnBuilderBase, HasDefault, HasRuntimeDefault } from 'drizzle-orm'
import type { ConvertCustomConfig as MySqlConfig, MySqlCustomColumnBuilder } from 'drizzle-orm/mysql-core'
import type { ConvertCustomConfig as PgConfig, PgCustomColumnBuilder } from 'drizzle-orm/pg-core'
import type { ConvertCustomConfig as SQLiteConfig, SQLiteCustomColumnBuilder } from 'drizzle-orm/sqlite-core'
import type { Generator } from './index.js'

/** How the column's values read in JavaScript: `bigint` (the default) or a decimal `string` (for JSON). Both are exact. */
export type SnowflakeMode = 'bigint' | 'string'

export interface SnowflakeOptions<TMode extends SnowflakeMode = 'bigint'> {
  /** `'bigint'` (the default) or `'string'`. */
  mode?: TMode
  /** The generator that fills the column; by default the process's shared one (`Generator.shared()`), taken at the first ID. */
  generator?: Generator
}

type Values<TMode extends SnowflakeMode, TDriver> = {
  data: TMode extends 'string' ? string : bigint
  driverData: TDriver
}
/** A column builder whose value `$defaultFn` fills from a generator. */
type Filled<T extends ColumnBuilderBase> = HasRuntimeDefault<HasDefault<T>>

/** The builder each dialect's column is, for a column name and a mode. */
interface Builders<TName extends string, TMode extends SnowflakeMode> {
  pg: PgCustomColumnBuilder<PgConfig<TName, Values<TMode, string>>>
  mysql: MySqlCustomColumnBuilder<MySqlConfig<TName, Values<TMode, string>>>
  sqlite: SQLiteCustomColumnBuilder<SQLiteConfig<TName, Values<TMode, bigint>>>
}

/** A column function of dialect `D`: the column name is optional (Drizzle takes the key's), then the options. */
export interface SnowflakeColumn<D extends keyof Builders<string, SnowflakeMode>> {
  <TMode extends SnowflakeMode = 'bigint'>(options?: SnowflakeOptions<TMode>): Filled<Builders<'', TMode>[D]>
  <TName extends string, TMode extends SnowflakeMode = 'bigint'>(name: TName, options?: SnowflakeOptions<TMode>): Filled<Builders<TName, TMode>[D]>
}

/** A PostgreSQL `bigint` column of rimeflake IDs, filled from a generator on insert. */
export declare const pgSnowflake: SnowflakeColumn<'pg'>
/** A MySQL `bigint` column of rimeflake IDs, filled from a generator on insert (mysql2 reads it exactly with `supportBigNumbers` and `bigNumberStrings`). */
export declare const mysqlSnowflake: SnowflakeColumn<'mysql'>
/** A SQLite `integer` column of rimeflake IDs, filled from a generator on insert (@libsql/client reads it exactly with `intMode: 'bigint'`). */
export declare const sqliteSnowflake: SnowflakeColumn<'sqlite'>
