// The ES module entry of rimeflake/otel: the same class as otel.js (CommonJS).
import { createRequire } from 'node:module'

export const { IdGenerator } = createRequire(import.meta.url)('./otel.js')
