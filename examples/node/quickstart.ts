// The README's Node quick start in TypeScript (checked by `make lint-node`: tsc --strict).
import { Generator, type Parts, RimeflakeError } from 'rimeflake'

export function newOrderId(): string {
  using gen = new Generator({ layout: 'js_safe', backend: 'memory', workerId: 1 })
  const id: number = gen.nextIdNumber() // exact: js_safe IDs have 53 bits
  const parts: Parts = gen.decode(id)
  console.log(parts.date.toISOString())
  return String(id)
}

try {
  console.log(newOrderId())
} catch (e) {
  if (e instanceof RimeflakeError) console.error(e.code, e.message)
  else throw e
}
