// Format history check: the current catalog against the latest snapshot, the change records
// and the migration chain (DESIGN §4 "Format history and change records").
import type { MachineCatalog } from './catalog-json.js'
import { diffCatalogs, type EntryDiff } from './diff.js'
import { missingGolden } from './golden.js'
import { CHANGES_DIR, PLACEHOLDER_NOTE, readRecords, recordPath } from './records.js'
import { FORMATS_DIR, readSnapshots, snapshotProblems } from './snapshots.js'

export interface HistoryInput {
  root: string
  catalog: MachineCatalog
  formatVersion: number
  /** The registered migrations, read from the running code; called only when a chain must be proven. */
  migrations: () => { steps: ReadonlyArray<{ from: number; to: number }>; error?: string }
  sessionTypesFile: string
}

export interface HistoryReport {
  problems: string[]
  diffs: EntryDiff[]
  base: number | undefined
}

/** Checks the current catalog against the latest snapshot and the change records. */
export function checkHistory(input: HistoryInput): HistoryReport {
  const { root, catalog, formatVersion } = input
  const problems: string[] = []
  const snapshots = readSnapshots(root)
  if (snapshots.length === 0) {
    problems.push(
      `no format snapshot in ${FORMATS_DIR}/: run \`pnpm gen-persistence-catalog --snapshot\` to record format version ${formatVersion}`,
    )
    return { problems, diffs: [], base: undefined }
  }
  problems.push(...snapshotProblems(snapshots))
  for (const path of missingGolden(
    root,
    snapshots.map((s) => s.version),
  )) {
    problems.push(
      `${path} is missing: every snapshotted format version keeps a golden log; give every event an @example (a JSON payload) and run \`pnpm gen-persistence-catalog --golden\` while SESSION_FORMAT_VERSION is that version`,
    )
  }
  let read: ReturnType<HistoryInput['migrations']> | undefined
  const migrationsOf = () => {
    read ??= input.migrations()
    return read
  }
  // Every step between consecutive snapshots must be registered by the code that runs.
  for (let i = 1; i < snapshots.length; i++) {
    const from = snapshots[i - 1]!.version
    for (let v = from; v < snapshots[i]!.version; v++) {
      if (!migrationsOf().steps.some((m) => m.from === v && m.to === v + 1)) {
        const error = migrationsOf().error
        problems.push(
          `${snapshots[i]!.path}: no migration from format ${v} to ${v + 1} is registered by the code that runs${error ? ` (${error})` : ''}: logs written under format ${v} could not be read; add registerMigration({ from: ${v}, to: ${v + 1}, … }) in a module the package's index imports`,
        )
      }
    }
  }
  const latest = snapshots[snapshots.length - 1]!
  if (formatVersion < latest.version) {
    problems.push(
      `SESSION_FORMAT_VERSION is ${formatVersion} but ${latest.path} exists: the format version never goes back; set it to ${latest.version} or later in ${input.sessionTypesFile}`,
    )
  }
  const diffs = diffCatalogs(latest.catalog, catalog)
  const records = readRecords(root)
  const base = latest.version
  const byPath = new Map(records.map((r) => [r.path, r]))
  for (const d of diffs) {
    const path = recordPath(base, d.event)
    const stored = byPath.get(path)
    const expect = `{ from: ${d.from ?? 'null'}, to: ${d.to ?? 'null'}, classification: ${d.classification} }`
    if (!stored) {
      problems.push(
        `${d.event} changed since format snapshot v${base} (${d.classification}: ${d.changes.join('; ')}) but has no change record ${path}: run \`pnpm gen-persistence-catalog --record "<why it changed>"\` and commit the record`,
      )
      continue
    }
    const r = stored.record
    if (!r) {
      problems.push(
        `${path} is not valid JSON (${stored.error}): delete it and run \`pnpm gen-persistence-catalog --record "<why>"\``,
      )
      continue
    }
    if (
      r.from !== d.from ||
      r.to !== d.to ||
      r.classification !== d.classification ||
      r.event !== d.event ||
      r.base !== base
    ) {
      problems.push(
        `${path} disagrees with the code: it says { from: ${r.from ?? 'null'}, to: ${r.to ?? 'null'}, classification: ${r.classification} } but the change is ${expect}; run \`pnpm gen-persistence-catalog --record "<why>"\` to redraft it (a classification is computed, never chosen)`,
      )
      continue
    }
    if (JSON.stringify(r.changes) !== JSON.stringify(d.changes)) {
      problems.push(
        `${path} lists other changes than the code has; run \`pnpm gen-persistence-catalog --record "<why>"\` to redraft it`,
      )
      continue
    }
    if (typeof r.note !== 'string' || r.note.trim() === '' || r.note === PLACEHOLDER_NOTE) {
      problems.push(
        `${path} has no note: write in "note" why ${d.event} changed and what it means for old logs`,
      )
    }
  }
  const changed = new Set(diffs.map((d) => recordPath(base, d.event)))
  for (const r of records) {
    if (r.path.startsWith(`${CHANGES_DIR}/v${base}/`) && !changed.has(r.path)) {
      problems.push(
        `${r.path} records a change that is no longer in the code (its event matches snapshot v${base}): delete the file`,
      )
    }
  }
  const breaking = diffs.filter((d) => d.classification === 'breaking')
  if (breaking.length > 0) {
    const list = breaking.map((d) => d.event).join(', ')
    const next = base + 1
    if (formatVersion === base) {
      problems.push(
        `breaking change to ${list}: logs written under format ${base} can no longer be read as-is. Either make the change compatible (add optional properties instead of required ones, widen instead of narrowing), or: set SESSION_FORMAT_VERSION to ${next} in ${input.sessionTypesFile}, register a migration \`registerMigration({ from: ${base}, to: ${next}, description, migrate(event) { … } })\` (from '@keel/session') that rewrites old events, then run \`pnpm gen-persistence-catalog --snapshot\``,
      )
    } else if (!migrationsOf().steps.some((m) => m.from === base && m.to === formatVersion)) {
      const error = migrationsOf().error
      if (error) problems.push(error)
      problems.push(
        `breaking change to ${list} with SESSION_FORMAT_VERSION ${formatVersion}, but no migration from ${base} to ${formatVersion} is registered: add \`registerMigration({ from: ${base}, to: ${formatVersion}, description, migrate(event) { … } })\` in a package source that the session loads`,
      )
    }
  }
  if (formatVersion > base && !snapshots.some((s) => s.version === formatVersion)) {
    problems.push(
      `SESSION_FORMAT_VERSION is ${formatVersion} but there is no snapshot ${FORMATS_DIR}/v${formatVersion}.json: once the change records and the migration are in place, run \`pnpm gen-persistence-catalog --snapshot\``,
    )
  }
  return { problems, diffs, base }
}
