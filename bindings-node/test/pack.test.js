'use strict'
// `npm pack` of the package (and of this platform's binary package, as publishing splits them)
// installs into an empty project and works there, from CommonJS and from an ES module.
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { root, tempDir } = require('./support')

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } })

test('the packed tarball installs into an empty project and runs', () => {
  const work = tempDir()
  const binary = fs.readdirSync(root).find((f) => /^rimeflake\..+\.node$/.test(f))
  assert.ok(binary, 'no built addon next to package.json: run npm install in bindings-node')
  const platform = binary.slice('rimeflake.'.length, -'.node'.length)
  // The platform package, as `napi artifacts` would fill it before publishing.
  const platformDir = path.join(work, `npm-${platform}`)
  fs.cpSync(path.join(root, 'npm', platform), platformDir, { recursive: true })
  fs.copyFileSync(path.join(root, binary), path.join(platformDir, binary))
  const tarballs = [
    npm(['pack', '--ignore-scripts', '--pack-destination', work], root).trim().split('\n').pop(),
    npm(['pack', '--pack-destination', work], platformDir).trim().split('\n').pop(),
  ].map((t) => path.join(work, t))
  const listing = execFileSync('tar', ['tzf', tarballs[0]], { encoding: 'utf8' })
  assert.ok(!/\.node$/m.test(listing), 'the main package carries no binary (the platform packages do)')
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'package.json']) assert.match(listing, new RegExp(`package/${f.replace('.', '\\.')}`))

  const app = path.join(work, 'app')
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }))
  npm(['install', '--offline', '--no-package-lock', ...tarballs], app)
  fs.writeFileSync(path.join(app, 'cjs.js'), `
    const { Generator, decode, ConfigError } = require('rimeflake')
    const gen = new Generator({ backend: 'memory', workerId: 4 })
    const id = gen.nextId()
    if (decode(id).workerId !== 4 || typeof ConfigError !== 'function') process.exit(1)
    console.log(String(id))`)
  fs.writeFileSync(path.join(app, 'esm.mjs'), `
    import { Generator, tracing } from 'rimeflake'
    const gen = new Generator({ backend: 'memory', workerId: 5 })
    console.log(gen.nextIdString(), tracing.globalId())`)
  // Run from the app, away from the repository: the installed copy is what loads.
  const cjs = execFileSync(process.execPath, ['cjs.js'], { cwd: app, encoding: 'utf8' })
  assert.match(cjs, /^\d+\n$/)
  const esm = execFileSync(process.execPath, ['esm.mjs'], { cwd: app, encoding: 'utf8' })
  assert.match(esm, /^\d+ [0-9a-f]{32}\.\d+\.\d+\n$/)
  const resolved = execFileSync(process.execPath, ['-p', "require.resolve('rimeflake')"], { cwd: app, encoding: 'utf8' })
  assert.ok(resolved.startsWith(app), resolved)
})
