import { resolve } from 'node:path'
import { brokenError, findPreset, loadPresetReport } from '@keel/presets'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './io.js'
import { checkDirectory } from './open-session.js'
import { pluginSearch } from './plugin-search.js'
import { reportBroken } from './preset-report.js'
import { checkKeelHome } from './store.js'
import { parseFlags, UsageError } from './usage.js'

/**
 * `keel presets list` and `keel presets show <id>` (`--cwd` picks the project). A broken
 * preset file is named on stderr with all its problems and left out; the rest still list.
 */
export async function presetsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv
  const { values, positionals } = parseFlags(`keel presets ${sub ?? ''}`.trim(), rest, {
    cwd: { type: 'string' },
  })
  const cwd = resolve(io.cwd ?? process.cwd(), values.cwd ?? '.')
  if (values.cwd !== undefined) await checkDirectory(cwd, '--cwd')
  if (!((sub === 'list' && positionals.length === 0) || (sub === 'show' && positionals.length === 1)))
    throw new UsageError('keel presets takes list, or show <id>: keel presets list | keel presets show <id>')
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  await checkKeelHome(home, io.env, 'read')
  const report = await loadPresetReport(pluginSearch(home, cwd))
  reportBroken(report.broken, io)
  const presets = report.presets
  if (sub === 'list') {
    const width = Math.max(...presets.map((p) => p.preset.id.length))
    for (const { preset, source } of presets) {
      io.out(
        `${preset.id.padEnd(width)}  ${preset.description}${source === 'shipped' ? '' : `  (${source})`}\n`,
      )
    }
    return 0
  }
  const id = positionals[0]!
  const broken = report.broken.find((b) => b.id === id)
  if (broken) throw brokenError([broken])
  const { preset, source } = findPreset(presets, id)
  const catalog = report.catalog
  io.out(`${preset.id} — ${preset.description}\n  from     ${source}\n`)
  io.out(`  tools    ${preset.tools.join(', ') || '(none)'}\n`)
  if (preset.model) io.out(`  model    ${preset.model}\n`)
  if (preset.policy) io.out(`  policy   ${JSON.stringify(preset.policy)}\n`)
  io.out(
    `  asks     ${preset.interactive ? 'a person, when the policy says ask' : 'nobody (what would be asked is refused)'}\n`,
  )
  io.out('  plugins\n')
  for (const ref of preset.plugins) {
    const provider = catalog.get(ref.use)
    io.out(
      `    ${ref.use}${provider ? `@${provider.version}` : ''}${ref.config === undefined ? '' : ` ${JSON.stringify(ref.config)}`}\n`,
    )
    if (provider)
      io.out(`      ${provider.description}${provider.source ? ` (from ${provider.source})` : ''}\n`)
  }
  if (preset.plugins.length === 0) io.out('    (none)\n')
  return 0
}
