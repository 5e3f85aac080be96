import type { SessionVerification } from '@keel/store'
import type { CliIo } from './io.js'
import { withSessionId } from './session-id.js'
import { selectStore } from './store.js'
import { parseFlags, UsageError } from './usage.js'

/**
 * `keel sessions verify <id> [--json]`: replays the whole log with every check, checks its
 * integrity records and compares the state resumed from its checkpoint with the replay.
 * Exit 0 when everything agrees, 1 when something differs (or the log is corrupt: the
 * load's error, one line).
 */
export async function verifySession(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('keel sessions verify', argv, {
    json: { type: 'boolean' },
    store: { type: 'string' },
  })
  if (positionals.length !== 1)
    throw new UsageError('usage: keel sessions verify <id> [--json] [--store jsonl|postgres]')
  const { store } = await selectStore(values.store, io.env)
  try {
    const report = await withSessionId(store, positionals[0]!, (id) => store.verify(id))
    io.out(values.json ? `${JSON.stringify(report, null, 2)}\n` : describe(report))
    return report.differences.length === 0 ? 0 : 1
  } finally {
    await store.close()
  }
}

/** The report in lines for people. */
function describe(report: SessionVerification): string {
  const lines = [`session ${report.id}: ${report.events} events replayed, every check applied`]
  lines.push(
    report.coveredTo === undefined
      ? '  integrity records: none kept by this store'
      : report.coveredTo === 0
        ? '  integrity records: none yet (written by an older build; the next writer adds them)'
        : `  integrity records: seqs 0..${report.coveredTo - 1} covered, every CRC held${report.coveredTo < report.events ? ` (${report.events - report.coveredTo} later events not covered yet)` : ''}`,
  )
  const checkpoint = report.checkpoint
  if (!checkpoint) lines.push('  checkpoint: none (loads replay the log)')
  else if (!checkpoint.usable) lines.push(`  checkpoint: not usable — ${checkpoint.reason}`)
  else if (report.differences.length === 0) {
    lines.push(`  checkpoint at seq ${checkpoint.seq}: resuming from it gives exactly the replayed state`)
  }
  for (const difference of report.differences) lines.push(`  DIFFERS: ${difference}`)
  for (const notice of report.notices) lines.push(`  notice ${notice.code}: ${notice.message}`)
  return `${lines.join('\n')}\n`
}
