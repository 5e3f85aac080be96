// Before the tests: the `keel` bundle (packages/cli/cli/build.mjs) is rebuilt when the
// sources changed since it was made, so the child-process tests run compiled JavaScript of
// the current sources (bin/keel.js would otherwise run the sources through tsx, correctly
// but slower).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { bundleStaleness } from './packages/cli/cli/bin/bundle-state.js'

export default function setup(): void {
  // pnpm's shim for vitest exports NODE_PATH=<its hidden hoisted store>, which every child
  // process would inherit: `keel` spawned by a test could then resolve a package its own
  // install cannot (a shipped plugin missing from @keel/cli's dependencies passed the tests
  // while `pnpm keel` failed). The workers and their children run as a user's shell would.
  Reflect.deleteProperty(process.env, 'NODE_PATH')
  const why = bundleStaleness()
  if (why === undefined) return
  const build = fileURLToPath(new URL('./packages/cli/cli/build.mjs', import.meta.url))
  process.stderr.write(`vitest setup: rebuilding the keel bundle (${why})\n`)
  const run = spawnSync(process.execPath, [build], { stdio: 'inherit' })
  if (run.status !== 0) throw new Error(`packages/cli/cli/build.mjs exited ${run.status ?? run.signal}`)
}
