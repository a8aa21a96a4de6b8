// Uses every export of the package, checked by `tsc --noEmit --strict` (test/types.test.js).
import {
  ClockRollbackError,
  ClosedError,
  ConfigError,
  decode,
  format,
  Generator,
  type GeneratorOptions,
  InterruptedWaitError,
  InvalidIdError,
  Layout,
  LeaseError,
  NoFreeWorkerError,
  OverloadedError,
  parse,
  type Parts,
  RimeflakeError,
  StateError,
  type Stats,
  TimeRangeError,
  otel,
  skywalking,
  VERSION,
} from 'rimeflake'

const options: GeneratorOptions = {
  workerId: 1,
  layout: 'twitter',
  namespace: 'types',
  stateDir: '/tmp/rimeflake-types',
  backend: 'memory',
  maxDriftMs: 2000,
  maxWaitMs: 5000,
  onRollback: 'wait',
  strictMonotonic: false,
  randomSequenceStart: true,
}

function demo(): void {
  using gen = new Generator(options)
  const id: bigint = gen.nextId()
  const text: string = gen.nextIdString()
  const many: BigUint64Array = gen.nextIds(10)
  const written: number = gen.fill(new BigUint64Array(16))
  const stats: Stats = gen.stats()
  const parts: Parts = gen.decode(id)
  const date: Date = parts.date
  const worker: number = gen.workerId
  const closed: boolean = gen.closed
  const layout: Layout = gen.layout
  console.log(text, many.length, written, stats.idsIssued, date, worker, closed, layout.describe())

  const js = new Generator({ layout: new Layout('js_safe'), backend: 'memory', workerId: 2 })
  const n: number = js.nextIdNumber()
  js.close()

  const shared = Generator.shared({ layout: 'twitter', backend: 'memory', workerId: 3 })
  shared[Symbol.dispose]()

  const l = new Layout('twitter')
  const back: bigint = l.compose({ timestampMs: parts.timestampMs, workerId: parts.workerId, sequence: parts.sequence })
  const b: Layout = Layout.baidu(1_700_000_000_000)
  const names: string[] = Layout.presets()
  const fields: number[] = [l.clockIdBits, l.timeBits, l.workerBits, l.sequenceBits, l.totalBits, l.unitMs, l.epochMs, l.maxWorkerId, l.maxClockId, l.maxSequence, l.maxTime, l.expiresAtMs]
  const fp: bigint = l.fingerprint
  const safe: boolean = l.isJsSafe && l.equals(b)
  const p2: Parts = decode(String(id), 'twitter')
  const p3: Parts = l.decode(id)
  const s: string = format(id, 'base62') + l.toString() + l.name + l.order
  const parsed: bigint = parse(s, 'dec')
  const trace: string = skywalking.globalId() + skywalking.processId() + VERSION
  const ids: string = otel.traceId(gen) + otel.spanId(gen)
  console.log(n, back, names, fields, fp, safe, p2, p3, parsed, trace, ids)
}

try {
  demo()
} catch (e) {
  if (e instanceof RimeflakeError) {
    const code: string = e.code
    console.log(code)
  }
  const classes = [ConfigError, ClockRollbackError, LeaseError, NoFreeWorkerError, StateError, InvalidIdError, ClosedError, TimeRangeError, OverloadedError, InterruptedWaitError]
  console.log(classes.some((C) => e instanceof C))
}
