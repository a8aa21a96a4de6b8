// The ES module entry: the same addon as index.js (CommonJS), re-exported by name.
import { createRequire } from 'node:module'

const native = createRequire(import.meta.url)('./index.js')

export const {
  Generator,
  Layout,
  decode,
  format,
  parse,
  skywalking,
  VERSION,
  RimeflakeError,
  ConfigError,
  ClockRollbackError,
  LeaseError,
  NoFreeWorkerError,
  StateError,
  InvalidIdError,
  ClosedError,
  TimeRangeError,
  OverloadedError,
  InterruptedWaitError,
} = native
export default native
