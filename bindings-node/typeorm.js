'use strict'
// rimeflake/typeorm: a TypeORM column of rimeflake IDs (BIGINT, read back exactly as a bigint or
// a decimal string) and a subscriber that fills it from a generator before every insert: save(),
// insert() and the query builder's insert().
//
//   @Entity() class User { @PrimaryColumn(snowflakeColumn()) id!: bigint }
//   new DataSource({ ..., entities: [User], subscribers: [SnowflakeSubscriber] })

const { defaultGenerator, generatorOption, need, toBigInt } = require('./integration.js')

const WHERE = 'rimeflake/typeorm'

// The column's transformer: IDs go to the driver as decimal strings (what every TypeORM driver
// takes for a BIGINT exactly) and come back as a bigint or a decimal string. It carries the
// column's generator, which SnowflakeSubscriber asks for a new ID.
class SnowflakeTransformer {
  #generator
  #mode

  constructor(generator, mode = 'bigint') {
    if (mode !== 'bigint' && mode !== 'string') throw new TypeError(`${WHERE}: mode must be 'bigint' or 'string', not ${String(mode)}`)
    this.#generator = generator
    this.#mode = mode
  }

  get mode() {
    return this.#mode
  }

  to(value) {
    return value === null || value === undefined ? value : toBigInt(value, WHERE).toString()
  }

  from(value) {
    if (value === null || value === undefined) return value
    const id = toBigInt(value, WHERE)
    return this.#mode === 'string' ? id.toString() : id
  }

  next() {
    const generator = this.#generator ?? defaultGenerator()
    return this.#mode === 'string' ? generator.nextIdString() : generator.nextId()
  }
}

// Column options for @PrimaryColumn / @Column or an EntitySchema's column: type 'bigint' and
// the transformer. `options.mode` ('bigint' or 'string'), `options.generator` (by default the
// process's shared one); every other option is TypeORM's.
function snowflakeColumn(options) {
  const generator = generatorOption(options, 'snowflakeColumn')
  const { mode, generator: _, ...rest } = options ?? {}
  return { type: 'bigint', ...rest, transformer: new SnowflakeTransformer(generator, mode) }
}

// Fills, before each insert, every column made by snowflakeColumn() that the entity leaves
// empty. TypeORM makes subscribers itself (`subscribers: [SnowflakeSubscriber]`), of the classes
// registered with its @EventSubscriber() decorator, applied below.
class SnowflakeSubscriber {
  beforeInsert(event) {
    const { entity, metadata } = event
    if (entity === null || typeof entity !== 'object') return
    for (const column of metadata.columns) {
      const { transformer } = column
      if (transformer instanceof SnowflakeTransformer && column.getEntityValue(entity) == null) {
        column.setEntityValue(entity, transformer.next())
      }
    }
  }
}

need('typeorm', WHERE, 'typeorm').EventSubscriber()(SnowflakeSubscriber)

module.exports = { SnowflakeSubscriber, SnowflakeTransformer, snowflakeColumn }
