// Format history check (the rules: docs/guides/persistence-catalog.md, "Reading a verify
// failure" and "Classification"): the snapshots as a
// sealed chain, each step between two snapshots against the records folded into it, the
// current catalog against the latest snapshot and its records, the migration chain the code
// registers, and every golden log loaded through that chain with today's types.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { MachineCatalog } from './catalog-json.js'
import { diffCatalogs, type EntryDiff } from './diff.js'
import { GOLDEN_DIR, goldenPath, goldenTypes } from './golden.js'
import {
  CHANGES_DIR,
  entryDigest,
  expectedRecord,
  PLACEHOLDER_NOTE,
  readRecords,
  recordPath,
  type StoredRecord,
} from './records.js'
import type { GoldenJob, RuntimeReport } from './runtime.js'
import { FORMATS_DIR, readSnapshots, type Snapshot, snapshotProblems } from './snapshots.js'

export interface HistoryInput {
  root: string
  catalog: MachineCatalog
  formatVersion: number
  /** The code that runs, asked for its migration steps and to load golden logs (memoized by the caller). */
  runtime: (goldens: readonly GoldenJob[]) => RuntimeReport
  /** Load every golden log through the chain (verify does; gen only reports). */
  loadGoldens: boolean
  sessionTypesFile: string
}

export interface HistoryReport {
  problems: string[]
  diffs: EntryDiff[]
  base: number | undefined
  /** SESSION_FORMAT_VERSION is one past the latest snapshot: what to do once the rest is settled. */
  snapshotDue?: string
}

const list = (xs: readonly string[]) => xs.join(', ')

/**
 * The records against `base` checked against the change from `base`'s catalog to `target`:
 * each changed entry has its record, each record says what the code computes and has a note,
 * and no record is left over. Returns the problems and the entries whose change is breaking.
 */
export function recordProblems(
  base: Snapshot,
  target: MachineCatalog,
  records: readonly StoredRecord[],
  what: string,
): { problems: string[]; breaking: string[]; diffs: EntryDiff[] } {
  const problems: string[] = []
  const breaking: string[] = []
  const v = base.version
  const diffs = diffCatalogs(base.catalog, target)
  const byPath = new Map(
    records.filter((r) => r.path.startsWith(`${CHANGES_DIR}/v${v}/`)).map((r) => [r.path, r]),
  )
  const entries = new Set(diffs.map((d) => d.event))
  for (const r of byPath.values()) if (r.record?.superseded?.length) entries.add(r.record.event)
  for (const event of [...entries].sort()) {
    const path = recordPath(v, event)
    const d = diffs.find((x) => x.event === event)
    const stored = byPath.get(path)
    byPath.delete(path)
    if (!stored) {
      problems.push(
        `${event} changed since format snapshot v${v} (${d!.classification}: ${d!.changes.join('; ')}) but has no change record ${path}: run \`pnpm gen-persistence-catalog --record "<why it changed>"\` and commit the record`,
      )
      continue
    }
    const r = stored.record
    if (!r) {
      problems.push(
        `${path} is not valid JSON (${stored.error}): restore it from version control, or delete it and run \`pnpm gen-persistence-catalog --record "<why>"\``,
      )
      continue
    }
    const want = expectedRecord(v, event, d, entryDigest(base.catalog, event), r.superseded)
    if (!want) {
      problems.push(
        `${path} records a change that is not in ${what} (its entry matches snapshot v${v} and every superseded state it keeps is the current one): delete the file`,
      )
      continue
    }
    if (want.classification === 'breaking') breaking.push(event)
    const expect = `{ from: ${want.from ?? 'null'}, to: ${want.to ?? 'null'}, classification: ${want.classification} }`
    if (
      r.from !== want.from ||
      r.to !== want.to ||
      r.classification !== want.classification ||
      r.event !== event ||
      r.base !== v
    ) {
      problems.push(
        `${path} disagrees with ${what}: it says { from: ${r.from ?? 'null'}, to: ${r.to ?? 'null'}, classification: ${r.classification} } but the change is ${expect}${want.superseded ? ` (it keeps ${want.superseded.length} superseded committed state(s))` : ''}; run \`pnpm gen-persistence-catalog --record "<why>"\` to redraft it (a classification is computed, never chosen)`,
      )
      continue
    }
    if (JSON.stringify(r.changes) !== JSON.stringify(want.changes)) {
      problems.push(
        `${path} lists other changes than ${what} has; run \`pnpm gen-persistence-catalog --record "<why>"\` to redraft it`,
      )
      continue
    }
    if (typeof r.note !== 'string' || r.note.trim() === '' || r.note === PLACEHOLDER_NOTE) {
      problems.push(
        `${path} has no note: write in "note" why ${event} changed and what it means for old logs`,
      )
    }
  }
  for (const path of byPath.keys()) {
    problems.push(
      `${path} records a change that is not in ${what} (its entry matches snapshot v${v} and no superseded committed state is kept): delete the file`,
    )
  }
  return { problems, breaking, diffs }
}

/** The golden log of every snapshot, as the runtime probe loads them. */
export function goldenJobs(root: string, snapshots: readonly Snapshot[]): GoldenJob[] {
  return snapshots.map((s) => ({
    version: s.version,
    path: join(root, goldenPath(s.version)),
    label: goldenPath(s.version),
  }))
}

/** Golden logs and change-record folders of versions no snapshot has: a deleted snapshot. */
function orphans(root: string, snapshots: readonly Snapshot[]): string[] {
  const have = new Set(snapshots.map((s) => s.version))
  const versions = (dir: string) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .map((d) => /^v(\d+)$/.exec(d))
          .filter((m): m is RegExpExecArray => m !== null)
          .map((m) => Number(m[1]))
      : []
  const out: string[] = []
  for (const v of versions(GOLDEN_DIR))
    if (!have.has(v))
      out.push(
        `${goldenPath(v)} exists but ${FORMATS_DIR}/v${v}.json does not: a released format snapshot was deleted; restore it from version control`,
      )
  for (const v of versions(CHANGES_DIR))
    if (!have.has(v))
      out.push(
        `${CHANGES_DIR}/v${v}/ holds change records against format v${v}, which has no snapshot ${FORMATS_DIR}/v${v}.json: a released format snapshot was deleted; restore it from version control`,
      )
  return out
}

/** Checks the snapshot chain, the current catalog against the latest snapshot, and the golden logs. */
export function checkHistory(input: HistoryInput): HistoryReport {
  const { root, catalog, formatVersion } = input
  const problems: string[] = []
  const snapshots = readSnapshots(root)
  problems.push(...orphans(root, snapshots))
  if (snapshots.length === 0) {
    problems.push(
      `no format snapshot in ${FORMATS_DIR}/: run \`pnpm gen-persistence-catalog --snapshot\` to record format version ${formatVersion}`,
    )
    return { problems, diffs: [], base: undefined }
  }
  problems.push(...snapshotProblems(root, snapshots))
  const records = readRecords(root)
  let report: RuntimeReport | undefined
  const runtime = () => {
    report ??= input.runtime(
      input.loadGoldens
        ? snapshots.map((s) => ({
            version: s.version,
            path: join(root, goldenPath(s.version)),
            label: goldenPath(s.version),
          }))
        : [],
    )
    return report
  }
  const migrationFrom = (v: number, why: string): string[] => {
    if (runtime().steps.some((m) => m.from === v && m.to === v + 1)) return []
    const error = runtime().error
    return [
      `${why}, but no migration from format ${v} to ${v + 1} is registered by the code that runs${error ? ` (${error})` : ''}: logs written under format ${v} could not be read; add \`registerMigration({ from: ${v}, to: ${v + 1}, owner: '<your package>', description, migrate(event) { … } })\` (from '@keel/session') in a module your package's src/index.ts imports`,
    ]
  }
  // Each step between two snapshots is exactly what the records folded into the later say.
  for (let i = 1; i < snapshots.length; i++) {
    const [before, after] = [snapshots[i - 1]!, snapshots[i]!]
    if (after.version !== before.version + 1) continue // reported as a gap
    const step = recordProblems(before, after.catalog, records, after.path)
    problems.push(...step.problems)
    if (step.breaking.length > 0)
      problems.push(...migrationFrom(before.version, `${after.path} breaks ${list(step.breaking)}`))
  }
  for (const s of snapshots) {
    if (!existsSync(join(root, goldenPath(s.version)))) continue
    const held = goldenTypes(root, s.version)
    const want = Object.keys(s.catalog.events).sort()
    const missing = want.filter((t) => !held.includes(t))
    const extra = held.filter((t) => !want.includes(t))
    if (missing.length + extra.length > 0)
      problems.push(
        `${goldenPath(s.version)} does not hold one event of every type of ${s.path}${missing.length ? ` (missing: ${list(missing)})` : ''}${extra.length ? ` (not in the snapshot: ${list(extra)})` : ''}`,
      )
  }
  const latest = snapshots[snapshots.length - 1]!
  const base = latest.version
  if (formatVersion < base) {
    problems.push(
      `SESSION_FORMAT_VERSION is ${formatVersion} but ${latest.path} exists: the format version never goes back; set it to ${base} or ${base + 1} in ${input.sessionTypesFile}`,
    )
  }
  const now = recordProblems(latest, catalog, records, 'the code')
  problems.push(...now.problems)
  if (now.breaking.length > 0) {
    if (formatVersion === base) {
      problems.push(
        `breaking change to ${list(now.breaking)}: logs written under format ${base} can no longer be read as-is. Either make the change compatible (add optional properties instead of required ones, widen instead of narrowing, keep a committed event's name), or: set SESSION_FORMAT_VERSION to ${base + 1} in ${input.sessionTypesFile}, register a migration \`registerMigration({ from: ${base}, to: ${base + 1}, owner: '<your package>', description, migrate(event) { … } })\` (from '@keel/session') that rewrites old events, then run \`pnpm gen-persistence-catalog --snapshot\``,
      )
    } else if (formatVersion === base + 1) {
      problems.push(
        ...migrationFrom(
          base,
          `breaking change to ${list(now.breaking)} with SESSION_FORMAT_VERSION ${formatVersion}`,
        ),
      )
    }
  }
  if (formatVersion > base + 1) {
    problems.push(
      `SESSION_FORMAT_VERSION is ${formatVersion} but the latest snapshot is v${base}: a release moves one version at a time; set it to ${base + 1} in ${input.sessionTypesFile}`,
    )
  }
  if (input.loadGoldens) {
    if (runtime().error) problems.push(runtime().error!)
    for (const g of runtime().goldens) problems.push(...g.problems)
  }
  const snapshotDue =
    formatVersion === base + 1
      ? `SESSION_FORMAT_VERSION is ${formatVersion} but there is no snapshot ${FORMATS_DIR}/v${formatVersion}.json: once the change records and the migration are in place, run \`pnpm gen-persistence-catalog --snapshot\``
      : undefined
  return { problems, diffs: now.diffs, base, ...(snapshotDue ? { snapshotDue } : {}) }
}
