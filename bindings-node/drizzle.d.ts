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

/** A PostgreSQL `bigint` column of rimeflake IDs, filled from a generator on insert. */
export declare function pgSnowflake<TMode extends SnowflakeMode = 'bigint'>(
  options?: SnowflakeOptions<TMode>,
): Filled<PgCustomColumnBuilder<PgConfig<'', Values<TMode, string>>>>
export declare function pgSnowflake<TName extends string, TMode extends SnowflakeMode = 'bigint'>(
  name: TName,
  options?: SnowflakeOptions<TMode>,
): Filled<PgCustomColumnBuilder<PgConfig<TName, Values<TMode, string>>>>

/** A MySQL `bigint` column of rimeflake IDs, filled from a generator on insert (mysql2 reads it exactly with `supportBigNumbers` and `bigNumberStrings`). */
export declare function mysqlSnowflake<TMode extends SnowflakeMode = 'bigint'>(
  options?: SnowflakeOptions<TMode>,
): Filled<MySqlCustomColumnBuilder<MySqlConfig<'', Values<TMode, string>>>>
export declare function mysqlSnowflake<TName extends string, TMode extends SnowflakeMode = 'bigint'>(
  name: TName,
  options?: SnowflakeOptions<TMode>,
): Filled<MySqlCustomColumnBuilder<MySqlConfig<TName, Values<TMode, string>>>>

/** A SQLite `integer` column of rimeflake IDs, filled from a generator on insert (@libsql/client reads it exactly with `intMode: 'bigint'`). */
export declare function sqliteSnowflake<TMode extends SnowflakeMode = 'bigint'>(
  options?: SnowflakeOptions<TMode>,
): Filled<SQLiteCustomColumnBuilder<SQLiteConfig<'', Values<TMode, bigint>>>>
export declare function sqliteSnowflake<TName extends string, TMode extends SnowflakeMode = 'bigint'>(
  name: TName,
  options?: SnowflakeOptions<TMode>,
): Filled<SQLiteCustomColumnBuilder<SQLiteConfig<TName, Values<TMode, bigint>>>>
