// Uses every export of rimeflake/otel and rimeflake/typeorm with the libraries they plug into,
// checked by `tsc --noEmit --strict` (test/types.test.js); rimeflake/drizzle's are in drizzle/.
import { BasicTracerProvider, type IdGenerator as SdkIdGenerator } from '@opentelemetry/sdk-trace-base'
import { Generator } from 'rimeflake'
import { IdGenerator, type IdGeneratorOptions } from 'rimeflake/otel'
import { type SnowflakeColumnOptions, SnowflakeSubscriber, SnowflakeTransformer, snowflakeColumn } from 'rimeflake/typeorm'
import { type DataSourceOptions, EntitySchema } from 'typeorm'

const gen = new Generator({ backend: 'memory', workerId: 1 })

// otel: the SDK's IdGenerator interface, for BasicTracerProvider.
const options: IdGeneratorOptions = { generator: gen }
const ids: SdkIdGenerator = new IdGenerator(options)
const provider = new BasicTracerProvider({ idGenerator: new IdGenerator() })
const hex: string = ids.generateTraceId() + ids.generateSpanId()
const from: Generator = new IdGenerator().generator

// typeorm: column options for an EntitySchema, and the subscriber class for a DataSource.
const columnOptions = { mode: 'bigint', generator: gen, comment: 'key' } satisfies SnowflakeColumnOptions<'bigint'>
const Order = new EntitySchema<{ id: bigint; ref: string }>({
  name: 'Order',
  columns: { id: { primary: true, ...snowflakeColumn(columnOptions) }, ref: snowflakeColumn({ mode: 'string' }) },
})
const dataSource: DataSourceOptions = { type: 'postgres', entities: [Order], subscribers: [SnowflakeSubscriber] }
const transformer: SnowflakeTransformer = snowflakeColumn().transformer
const next: bigint | string = transformer.next()

export { dataSource, from, hex, next, provider }
