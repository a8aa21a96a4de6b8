'use strict'
// rimeflake/otel: span and trace IDs for OpenTelemetry's SDK, from a rimeflake generator.
//
//   const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base')
//   const { IdGenerator } = require('rimeflake/otel')
//   const provider = new BasicTracerProvider({ idGenerator: new IdGenerator() })
//
// Span IDs are the generator's IDs (never 0) as 16 hex digits; trace IDs are a generator's ID
// then 64 bits from the operating system's randomness, as 32 hex digits, so the SDK's
// TraceIdRatioBasedSampler keeps the ratio asked. The rimeflake core makes both (its `otel`
// module), as it does for Python's rimeflake.otel. Needs no OpenTelemetry package itself: the
// SDK's IdGenerator is an interface of two methods.

const { otel } = require('./index.js')
const { defaultGenerator, generatorOption } = require('./integration.js')

class IdGenerator {
  #generator

  // `options.generator`: the Generator the IDs come from; by default the process's shared one
  // (Generator.shared(), settings from the environment), taken at the first ID.
  constructor(options) {
    this.#generator = generatorOption(options, 'IdGenerator')
  }

  get generator() {
    return this.#generator ?? defaultGenerator()
  }

  generateTraceId() {
    return otel.traceId(this.#generator ?? defaultGenerator())
  }

  generateSpanId() {
    return otel.spanId(this.#generator ?? defaultGenerator())
  }
}

module.exports = { IdGenerator }
