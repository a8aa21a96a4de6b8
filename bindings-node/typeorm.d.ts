// rimeflake/typeorm: TypeORM columns of rimeflake IDs, filled by a subscriber before each insert.
import type { ColumnOptions, EntitySubscriberInterface, InsertEvent, ValueTransformer } from 'typeorm'
import type { Generator } from './index.js'

/** How the column's values read in JavaScript: `bigint` (the default) or a decimal `string` (for JSON). Both are exact. */
export type SnowflakeMode = 'bigint' | 'string'

/** TypeORM's column options but `type`, `transformer` and `generated` (the column's are its own), and: */
export interface SnowflakeColumnOptions<TMode extends SnowflakeMode = SnowflakeMode> extends Omit<ColumnOptions, 'type' | 'transformer' | 'generated'> {
  /** `'bigint'` (the default) or `'string'`. */
  mode?: TMode
  /** The generator that fills the column; by default the process's shared one (`Generator.shared()`), taken at the first ID. */
  generator?: Generator
}

/** The column's transformer: IDs go to the driver as decimal strings and come back as `bigint` or `string`. */
export declare class SnowflakeTransformer implements ValueTransformer {
  constructor(generator?: Generator, mode?: SnowflakeMode)
  readonly mode: SnowflakeMode
  to(value: bigint | string | null | undefined): string | null | undefined
  from(value: unknown): bigint | string | null | undefined
  /** A new ID of the column's generator, in the column's mode. */
  next(): bigint | string
}

/** Options for `@PrimaryColumn(...)`, `@Column(...)` or an `EntitySchema` column: a `bigint` of rimeflake IDs. */
export declare function snowflakeColumn<TOptions extends SnowflakeColumnOptions = {}>(
  options?: TOptions,
): Omit<TOptions, 'mode' | 'generator'> & { type: 'bigint'; transformer: SnowflakeTransformer }

/** Fills every `snowflakeColumn()` an entity leaves empty, before each insert: `subscribers: [SnowflakeSubscriber]`. */
export declare class SnowflakeSubscriber implements EntitySubscriberInterface {
  beforeInsert(event: InsertEvent<unknown>): void
}
