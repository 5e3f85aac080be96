import { resolve } from 'node:path'
import { builtinCatalog, findPreset, loadPresets } from '@keel/presets'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './commands.js'
import { UsageError } from './llm.js'

/** `keel presets list` and `keel presets show <id>` (`--cwd` picks the project). */
export async function presetsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv
  const cwdAt = rest.indexOf('--cwd')
  const cwd = resolve(cwdAt >= 0 && rest[cwdAt + 1] ? rest[cwdAt + 1]! : (io.cwd ?? process.cwd()))
  const args = cwdAt >= 0 ? [...rest.slice(0, cwdAt), ...rest.slice(cwdAt + 2)] : rest
  const presets = await loadPresets({ keelHome: keelHome(io.env as NodeJS.ProcessEnv), projectDir: cwd })
  if (sub === 'list' && args.length === 0) {
    const width = Math.max(...presets.map((p) => p.preset.id.length))
    for (const { preset, source } of presets) {
      io.out(
        `${preset.id.padEnd(width)}  ${preset.description}${source === 'shipped' ? '' : `  (${source})`}\n`,
      )
    }
    return 0
  }
  if (sub === 'show' && args.length === 1) {
    const { preset, source } = findPreset(presets, args[0]!)
    const catalog = builtinCatalog()
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
      if (provider) io.out(`      ${provider.description}\n`)
    }
    if (preset.plugins.length === 0) io.out('    (none)\n')
    return 0
  }
  throw new UsageError('usage: keel presets list | keel presets show <id> [--cwd dir]')
}
