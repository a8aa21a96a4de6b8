// The ES module entry of rimeflake/typeorm: the same classes as typeorm.js (CommonJS).
import { createRequire } from 'node:module'

export const { SnowflakeSubscriber, SnowflakeTransformer, snowflakeColumn } = createRequire(import.meta.url)('./typeorm.js')
