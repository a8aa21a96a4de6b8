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
  // Deprecated: the old name of InterruptedWaitError, kept for one release.
  InterruptedError,
  // Deprecated: the old name of skywalking (the same object), kept for one release.
  tracing,
} = native
export default native
