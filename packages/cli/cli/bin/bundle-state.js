// Whether `dist/` (the bundle build.mjs makes) is current, for bin/keel.js and the test setup.
// Current: `dist/inputs.json` exists and — inside the workspace it was built in — every
// source it lists has the size and mtime it had at the build. Outside that workspace (an
// installed copy) the bundle is all there is.
import { existsSync, readFileSync, statSync } from 'node:fs'

/** The bundle's directory. */
export const DIST = new URL('../dist/', import.meta.url)

/** Why the bundle cannot run, or undefined when it is current. */
export function bundleStaleness(dist = DIST) {
  let manifest
  try {
    manifest = JSON.parse(readFileSync(new URL('inputs.json', dist), 'utf8'))
  } catch (error) {
    if (error.code === 'ENOENT') return 'not built (no dist/inputs.json)'
    throw error
  }
  if (!existsSync(new URL(`${manifest.root}/pnpm-workspace.yaml`, dist))) return undefined
  for (const [file, mtimeMs, size] of manifest.inputs) {
    let now
    try {
      now = statSync(new URL(file, dist))
    } catch (error) {
      if (error.code === 'ENOENT') return `${file} is gone`
      throw error
    }
    if (now.mtimeMs !== mtimeMs || now.size !== size) return `${file} changed since the build`
  }
  return undefined
}
