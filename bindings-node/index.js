'use strict'
// The CommonJS entry: loads the native addon for this platform and exports it.
//
// The addon ships in one npm package per platform (rimeflake-linux-x64-gnu, ...), which npm
// installs as an optional dependency of rimeflake: only the one matching this machine. In a
// source checkout, `napi build --platform` puts rimeflake.<platform>.node beside this file
// instead, and that copy is preferred. NAPI_RS_NATIVE_LIBRARY_PATH names an addon file to load
// in place of both (the benchmark loads a release build this way).

const { version } = require('./package.json')

// The platforms a release publishes a package for (package.json's napi.targets).
const PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl', 'darwin-x64', 'darwin-arm64']

// Linux: glibc or musl. Node's report names the glibc it runs on; a musl build has none.
function libc() {
  try {
    const header = process.report && process.report.getReport().header
    return header && header.glibcVersionRuntime ? 'gnu' : 'musl'
  } catch {
    return 'gnu'
  }
}

function platformKey() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${libc()}`
  return `${platform}-${arch}`
}

function loadError(message, cause, code) {
  const error = new Error(message)
  error.code = code
  if (cause) error.cause = cause
  return error
}

// True when `err` says that `name` itself could not be found (not a file it needs).
function notFound(err, name) {
  return err && err.code === 'MODULE_NOT_FOUND' && String(err.message).includes(`'${name}'`)
}

function load() {
  const override = process.env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (override) return require(override)

  const key = platformKey()
  const local = `./rimeflake.${key}.node`
  try {
    return require(local)
  } catch (err) {
    if (!notFound(err, local)) throw err
  }

  const pkg = `rimeflake-${key}`
  if (!PLATFORMS.includes(key)) {
    throw loadError(
      `rimeflake ${version} has no native addon for this platform (${key}): packages exist for ` +
        `${PLATFORMS.join(', ')}. On another platform, build it from source (bindings-node in the ` +
        'repository: napi build --platform --release).',
      null,
      'ERR_RIMEFLAKE_UNSUPPORTED_PLATFORM',
    )
  }
  let binding
  try {
    binding = require(pkg)
  } catch (err) {
    if (!notFound(err, pkg)) {
      throw loadError(`rimeflake: the native addon in ${pkg} could not be loaded: ${err.message}`, err, 'ERR_RIMEFLAKE_ADDON_LOAD')
    }
    throw loadError(
      `rimeflake: the native addon for this platform (${key}) is in the package ${pkg}, which is ` +
        'not installed. npm installs it with rimeflake as an optional dependency, and leaves it ' +
        'out when optional dependencies are omitted (--omit=optional, --no-optional, ' +
        'omit=optional in .npmrc) or when node_modules was installed on another platform. ' +
        `Install it with: npm install ${pkg}@${version}`,
      err,
      'ERR_RIMEFLAKE_ADDON_NOT_FOUND',
    )
  }
  const found = require(`${pkg}/package.json`).version
  if (found !== version) {
    throw loadError(
      `rimeflake ${version} needs ${pkg} ${version}, but ${found} is installed. ` +
        `Install the matching one with: npm install ${pkg}@${version}`,
      null,
      'ERR_RIMEFLAKE_ADDON_VERSION',
    )
  }
  return binding
}

module.exports = load()
