import { writeFile } from 'node:fs/promises'
import { errorMessage } from '@keel/base'
import type { SessionEvent } from '@keel/session'
import type { SessionStore } from '@keel/store'
import { keelHome } from '@keel/store-jsonl'
import type {} from '@keel/subagents'
import { type ExportedSession, sessionToHtml } from './export-html.js'
import type { CliIo } from './io.js'
import { loadReportedPresets } from './preset-report.js'
import { priceTable } from './pricing.js'
import { withSessionId } from './session-id.js'
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
    const inspection = await withSessionId(store, positionals[0]!, (id) => store.inspect(id))
    const { header } = inspection
    // The session's preset may price its models its own way (`prices`).
    const presets = await loadReportedPresets(
      keelHome(io.env as NodeJS.ProcessEnv),
      header.cwd ?? io.cwd ?? process.cwd(),
      io,
      undefined,
    )
    const preset = presets.presets.find((p) => p.preset.id === header.agentPreset)?.preset
    const children = await descendants(store, inspection.events, (text) => io.err(text))
    const html = sessionToHtml(header, inspection.events, { prices: priceTable(preset), children })
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

/** Most subagent sessions one export includes (a runaway fan-out is cut, with a note). */
const MAX_CHILDREN = 100

/**
 * The sessions of the subagents `events` started, and theirs, in the order they were
 * started (at most {@link MAX_CHILDREN}); a child that cannot be read is named on stderr.
 */
async function descendants(
  store: SessionStore,
  events: readonly SessionEvent[],
  warn: (text: string) => void,
): Promise<ExportedSession[]> {
  const out: ExportedSession[] = []
  const seen = new Set<string>()
  const queue = spawnedIn(events)
  while (queue.length > 0) {
    const id = queue.shift()!
    if (seen.has(id)) continue
    seen.add(id)
    if (out.length >= MAX_CHILDREN) {
      warn(`keel: more than ${MAX_CHILDREN} subagent sessions; the rest are not in the page\n`)
      break
    }
    try {
      const child = await store.inspect(id)
      out.push({ header: child.header, events: child.events })
      queue.push(...spawnedIn(child.events))
    } catch (error) {
      warn(`keel: subagent session ${id} cannot be read: ${errorMessage(error)}\n`)
    }
  }
  return out
}

function spawnedIn(events: readonly SessionEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'subagent/spawned' ? [e.data.child] : []))
}
