// rimeflake/otel: span and trace IDs for OpenTelemetry's SDK, from a rimeflake generator.
import type { Generator } from './index.js'

export interface IdGeneratorOptions {
  /** The generator the IDs come from; by default the process's shared one (`Generator.shared()`), taken at the first ID. */
  generator?: Generator
}

/**
 * An `IdGenerator` for `new BasicTracerProvider({ idGenerator })` (and NodeSDK's `idGenerator`):
 * span IDs are the generator's IDs (never 0), trace IDs a generator's ID followed by 64 random
 * bits, as lower-case hex, so ratio sampling keeps the ratio asked.
 */
export declare class IdGenerator {
  constructor(options?: IdGeneratorOptions)
  /** The generator the IDs come from (the default one, taken now if it was not yet). */
  readonly generator: Generator
  /** A trace ID: 32 lower-case hex digits, a rimeflake ID then 64 random bits. */
  generateTraceId(): string
  /** A span ID: 16 lower-case hex digits, a rimeflake ID (never 0). */
  generateSpanId(): string
}
