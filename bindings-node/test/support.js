'use strict'
// Shared by the tests: the package under test, a fresh state directory per test file, and the
// shared vectors.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.join(__dirname, '..')
const repo = path.join(root, '..')

function tempDir(prefix = 'rimeflake-node-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

// Every test file starts with a state directory of its own, so that no test leases from the
// user's directory and files running in parallel never share one.
process.env.RIMEFLAKE_STATE_DIR = tempDir()
process.env.RIMEFLAKE_NO_CONTAINER_WARNING = '1'

const rf = require(root)

function vectors() {
  return JSON.parse(fs.readFileSync(path.join(repo, 'testdata', 'vectors.json'), 'utf8'))
}

// The throwaway PostgreSQL server's URL (scripts/with-postgres, which make test-node runs).
function postgresUrl() {
  const url = process.env.RIMEFLAKE_TEST_POSTGRES_URL
  if (!url) throw new Error('RIMEFLAKE_TEST_POSTGRES_URL is not set: run `make test-node` (it starts PostgreSQL) or `scripts/with-postgres node --test test/`')
  return url
}

// Runs the JavaScript `src` in `threads` worker threads at once, each with `workerData` (and
// `root`, the package); resolves to the first message of each.
function inThreads(threads, src, workerData = {}) {
  const { Worker } = require('node:worker_threads')
  return Promise.all(
    Array.from({ length: threads }, () => new Promise((resolve, reject) => {
      const w = new Worker(src, { eval: true, workerData: { root, ...workerData } })
      w.on('message', resolve)
      w.on('error', reject)
    })),
  )
}

// IDs (as text) that one thread or process inserted, in its order: each above the one before.
function increasing(ids, who = 'thread') {
  const keys = ids.map(BigInt)
  for (let i = 1; i < keys.length; i++) {
    if (!(keys[i - 1] < keys[i])) throw new Error(`a ${who}'s later row got a smaller key: ${keys[i - 1]} then ${keys[i]}`)
  }
}

module.exports = { rf, root, repo, tempDir, vectors, postgresUrl, inThreads, increasing }
