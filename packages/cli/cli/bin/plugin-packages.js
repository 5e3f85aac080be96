// Whether this run may load a plugin package (one Keel does not ship), for bin/keel.js. The
// bundle carries its own copy of every @keel package, so a plugin package — which imports
// @keel/session and friends from node_modules — would register its events into another copy
// than the one the bundle runs: such a run takes the sources instead. Plugin packages come
// only from preset files (`<project>/.keel/presets/*.json`, `$KEEL_HOME/presets/*.json`) and
// from a recorded composition (`resume`, `fork`, `-c`), so those are what is looked at.
import { readdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

const REOPENS = new Set(['resume', 'fork'])

/** The value of `--cwd dir` / `--cwd=dir` in `argv`, if any. */
function cwdFlag(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--cwd') return argv[i + 1]
    if (argv[i].startsWith('--cwd=')) return argv[i].slice('--cwd='.length)
  }
  return undefined
}

/** The `use` of every plugin in the preset files of `dir` (unreadable files name nothing here; the CLI reports them). */
function usesIn(dir) {
  let names
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'))
  } catch {
    return [] // no presets directory: nothing to look at
  }
  const uses = []
  for (const name of names) {
    try {
      const preset = JSON.parse(readFileSync(join(dir, name), 'utf8'))
      for (const plugin of Array.isArray(preset?.plugins) ? preset.plugins : [])
        if (typeof plugin?.use === 'string') uses.push(plugin.use)
    } catch {
      // a broken preset file is the CLI's to report, with its place; it names no package here
    }
  }
  return uses
}

/** Why this run must take the sources (a plugin package may be loaded), or undefined. */
export function pluginPackagesReason(argv, env, cwd) {
  if (REOPENS.has(argv[0]) || argv.includes('-c') || argv.includes('--continue'))
    return 'a reopened session may record plugin packages'
  const home = env.KEEL_HOME && env.KEEL_HOME !== '' ? env.KEEL_HOME : join(homedir(), '.keel')
  const project = resolve(cwd, cwdFlag(argv) ?? '.')
  for (const dir of [join(project, '.keel', 'presets'), join(home, 'presets')]) {
    const outside = usesIn(dir).find((use) => !use.startsWith('@keel/'))
    if (outside !== undefined) return `a preset in ${dir} uses the plugin package ${outside}`
  }
  return undefined
}
