import { writeFile } from 'node:fs/promises'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './commands.js'
import { sessionToHtml } from './export-html.js'
import { loadReportedPresets } from './preset-report.js'
import { priceTable } from './pricing.js'
import { selectStore } from './store.js'
import { parseFlags, UsageError } from './usage.js'

/** `keel sessions export <id> --html [-o file]`: the page on stdout, or in a file (priced by the session's preset). */
export async function exportSession(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('keel sessions export', argv, {
    html: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
    store: { type: 'string' },
  })
  if (positionals.length !== 1 || !values.html)
    throw new UsageError(
      'keel sessions export needs one session id and --html: keel sessions export <id> --html [-o file]',
    )
  const { store } = await selectStore(values.store, io.env)
  try {
    const inspection = await store.inspect(positionals[0]!)
    const { header } = inspection
    // The session's preset may price its models its own way (`prices`).
    const presets = await loadReportedPresets(
      keelHome(io.env as NodeJS.ProcessEnv),
      header.cwd ?? io.cwd ?? process.cwd(),
      io,
      undefined,
    )
    const preset = presets.find((p) => p.preset.id === header.agentPreset)?.preset
    const html = sessionToHtml(header, inspection.events, { prices: priceTable(preset) })
    if (values.output === undefined) io.out(html)
    else {
      await writeFile(values.output, html, 'utf8')
      io.err(`keel: wrote ${values.output}\n`)
    }
    return 0
  } finally {
    await store.close()
  }
}
