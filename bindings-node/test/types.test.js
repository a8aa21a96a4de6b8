'use strict'
// The package's surface: index.d.ts and index.js are what napi-rs generates from the sources
// now, the ES module entry exports what the CommonJS one does, and a TypeScript file using
// every export passes `tsc --noEmit --strict`.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { rf, root, tempDir } = require('./support')

const bin = (name) => path.join(root, 'node_modules', '.bin', name)

test('index.d.ts and index.js are fresh (napi build regenerates them identically)', () => {
  const out = tempDir()
  // A debug build of the same sources: cargo has it already, napi writes the declarations.
  execFileSync(bin('napi'), ['build', '--platform', '-o', out], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] })
  for (const f of ['index.d.ts', 'index.js']) {
    const fresh = fs.readFileSync(path.join(out, f), 'utf8')
    const committed = fs.readFileSync(path.join(root, f), 'utf8')
    assert.ok(fresh === committed, `${f} is stale: run \`npm run build:debug\` in bindings-node and commit ${f}`)
  }
})

test('every declared export exists, and the ES module entry exports the same names', async () => {
  const dts = fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8')
  const declared = [...dts.matchAll(/^export declare (?:class|function|const|namespace) (\w+)/gm)].map((m) => m[1])
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
