// The README's Node quick start as an ES module. Run: `make example-node`.
import { Generator, Layout } from 'rimeflake'

// A shared generator: every worker thread of this process that asks for the same options gets
// the same lease and counter. Each user closes its own hold.
const gen = Generator.shared({ layout: new Layout('twitter') })
const id = gen.nextId()
console.log('esm:', id, gen.decode(id))
gen.close()
