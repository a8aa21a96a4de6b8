'use strict'
// The package's surface: index.d.ts is what napi-rs generates from the sources now, the ES
// module entry exports what the CommonJS one does, and a TypeScript file using
// every export passes `tsc --noEmit --strict`.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { rf, root, tempDir } = require('./support')

const bin = (name) => path.join(root, 'node_modules', '.bin', name)

test('index.d.ts is fresh (napi build regenerates it identically) and declares no internal name', (t) => {
  const out = tempDir()
  t.after(() => fs.rmSync(out, { recursive: true, force: true })) // the debug addon: 80 MB
  // A debug build of the same sources and features as make node-env: cargo has it already,
  // napi writes the declarations. (index.js is written by hand: --no-js.)
  execFileSync(bin('napi'), ['build', '--platform', '--no-js', '--features', 'internals', '-o', out], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  const fresh = fs.readFileSync(path.join(out, 'index.d.ts'), 'utf8')
  const committed = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
  assert.ok(fresh === committed, 'index.d.ts is stale: run `make node-env` (napi build) and commit index.d.ts')
  // The tests' and the benchmark's exports (the internals feature) are never declared.
  assert.doesNotMatch(committed, /^export .*\b_\w+/m)
  assert.doesNotMatch(committed, /__napi/)
})

test('every declared export exists, and the ES module entry exports the same names', async () => {
  const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
  const declared = [...dts.matchAll(/^export (?:declare )?(?:class|function|const|namespace) (\w+)/gm)].map((m) => m[1])
  for (const name of declared) assert.ok(name in rf, `${name} is declared but not exported`)
  const esm = await import(path.join(root, 'index.mjs'))
  const cjsNames = Object.keys(rf).filter((k) => !k.startsWith('_')).sort()
  const esmNames = Object.keys(esm).filter((k) => k !== 'default').sort()
  assert.deepEqual(esmNames, cjsNames)
  for (const k of esmNames) assert.equal(esm[k], rf[k], k)
})

test('a TypeScript file using every export passes tsc --noEmit --strict', () => {
  try {
    execFileSync(bin('tsc'), ['-p', path.join(__dirname, 'types')], { cwd: root, encoding: 'utf8' })
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`)
  }
})

// The keys of an interface the core's tables generate into index.d.ts.
function declaredKeys(name) {
  const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
  const body = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`))
  assert.ok(body, `index.d.ts declares no interface ${name}`)
  return [...body[1].matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1])
}

test('stats() has the keys that index.d.ts declares, both from the core table of counters', () => {
  const gen = new rf.Generator({ backend: 'memory', workerId: 1 })
  assert.deepEqual(Object.keys(gen.stats()), declaredKeys('Stats'))
  gen.close()
})

test('every option index.d.ts declares is one the constructor takes, both from the core table of settings', () => {
  const keys = declaredKeys('GeneratorOptions')
  assert.ok(keys.includes('workerId') && keys.includes('leaseTtlMs'), keys.join())
  // undefined is the same as left out, so each key alone must pass the check of the keys.
  for (const key of keys) {
    const options = { backend: 'memory', workerId: 1 }
    if (!(key in options)) options[key] = undefined
    new rf.Generator(options).close()
  }
  const presets = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8').match(/export type LayoutName = (.*)/)[1]
  assert.deepEqual([...presets.matchAll(/'(\w+)'/g)].map((m) => m[1]), rf.Layout.presets())
})

test('rimeflake/drizzle passes tsc --strict with drizzle-orm, and its declarations have no error of their own', () => {
  try {
    execFileSync(bin('tsc'), ['-p', path.join(__dirname, 'types', 'drizzle')], { cwd: root, encoding: 'utf8' })
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`)
  }
  // The drizzle check skips the libraries' declarations, as drizzle-orm's own fail a full check;
  // with it, every error must be drizzle-orm's: none in rimeflake's drizzle.d.ts or the usage.
  let out = ''
  try {
    execFileSync(bin('tsc'), ['-p', path.join(__dirname, 'types', 'drizzle'), '--skipLibCheck', 'false'], { cwd: root, encoding: 'utf8' })
  } catch (e) {
    out = e.stdout + e.stderr
  }
  const ours = out.split('\n').filter((line) => /^\S.*\(\d+,\d+\): error/.test(line) && !line.startsWith('node_modules/drizzle-orm/'))
  assert.deepEqual(ours, [])
})
