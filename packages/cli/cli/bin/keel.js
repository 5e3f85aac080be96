#!/usr/bin/env node
// Runs the bundle (`dist/cli.js`, made by build.mjs on `pnpm install` and `pnpm build`) while
// it is current (see bundle-state.js) and the run loads no plugin package (see
// plugin-packages.js), else the TypeScript sources through tsx, so an edit is never hidden by
// a stale build. KEEL_TRACE_START=1 says on stderr which one runs and why.
import { bundleStaleness, DIST } from './bundle-state.js'
import { pluginPackagesReason } from './plugin-packages.js'

const why = bundleStaleness() ?? pluginPackagesReason(process.argv.slice(2), process.env, process.cwd())
const trace = process.env.KEEL_TRACE_START === '1'
if (why === undefined) {
  if (trace) process.stderr.write('keel: start: dist/cli.js (the bundle is current)\n')
  await import(new URL('cli.js', DIST).href)
} else {
  if (trace) process.stderr.write(`keel: start: the sources through tsx (${why}; pnpm build refreshes it)\n`)
  const { register } = await import('tsx/esm/api')
  register()
  await import(new URL('../src/cli.ts', import.meta.url).href)
}
