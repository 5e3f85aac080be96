// What `pnpm gen-persistence-catalog` writes: the generated files, the change records (drafted
// with `--record`, and the committed states gen must keep, see committed.ts), and with
// `--snapshot` the format snapshot with its golden log. A snapshot is written only when the
// history before it is settled and the golden log it freezes loads with the code that runs.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { stableJson } from './catalog-json.js'
import { committedCatalog, supersede } from './committed.js'
import { diffCatalogs } from './diff.js'
import { FORMAT_REFERENCE, renderFormatReference } from './format-reference.js'
import {
  CATALOG_JSON,
  type GeneratedCatalog,
  type GenerateOptions,
  generateCatalog,
  historyOf,
  runtimeOf,
} from './generate.js'
import { goldenPath, renderGolden } from './golden.js'
import { type HistoryReport, recordProblems } from './history.js'
import {
  CHANGES_DIR,
  type ChangeRecord,
  draftRecords,
  PLACEHOLDER_NOTE,
  readRecords,
  recordJson,
} from './records.js'
import { FORMATS_DIR, readSnapshots, sealedSnapshot, sealPartsFor, snapshotProblems } from './snapshots.js'
import { sourceOf, TRANSLATIONS_ZH } from './translations.js'

/** Writes files (relative paths) under root, creating folders. Returns the paths whose content changed. */
export function writeFiles(root: string, files: Record<string, string>): string[] {
  const changed: string[] = []
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel)
    if (existsSync(abs) && readFileSync(abs, 'utf8') === content) continue
    mkdirSync(dirname(abs), { recursive: true })
    writeFileSync(abs, content)
    changed.push(rel)
  }
  return changed
}

/** Why a snapshot is not written. */
export class SnapshotRefused extends Error {}

const refuse = (why: string): never => {
  throw new SnapshotRefused(why)
}

export interface SnapshotResult {
  path: string
  golden: string
  removedRecords: string[]
  replaced: boolean
}

/**
 * Loads the golden log `text` would be (as format `version`) and every committed golden log
 * with the code that runs; refuses when one does not load.
 */
function provenGolden(root: string, gen: GeneratedCatalog, version: number, text: string): void {
  const tmp = mkdtempSync(join(tmpdir(), 'keel-golden-'))
  try {
    const candidate = join(tmp, 'session.jsonl')
    writeFileSync(candidate, text)
    const others = readSnapshots(root)
      .filter((s) => s.version !== version)
      .map((s) => ({
        version: s.version,
        path: join(root, goldenPath(s.version)),
        label: goldenPath(s.version),
      }))
    const report = runtimeOf(root, gen, [
      ...others,
      { version, path: candidate, label: `the golden log of format ${version} (from the @example payloads)` },
    ])
    const problems = [...(report.error ? [report.error] : []), ...report.goldens.flatMap((g) => g.problems)]
    if (problems.length > 0)
      refuse(`the snapshot of format ${version} is not written: ${[...new Set(problems)].join('; ')}`)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * Writes `formats/v<SESSION_FORMAT_VERSION>.json` with its golden log. A new version needs the
 * history before it settled (records with notes, the migration registered), no trace of an
 * earlier snapshot of that version (a deleted snapshot is restored, never rebuilt), and a
 * golden log that loads. Rewriting an existing snapshot needs `force`, an intact chain and
 * no breaking change against it; the records against it are folded into it.
 */
export function writeSnapshot(root: string, gen: GeneratedCatalog, force: boolean): SnapshotResult {
  const version = gen.model.formatVersion
  const path = `${FORMATS_DIR}/v${version}.json`
  const snapshots = readSnapshots(root)
  const broken = snapshotProblems(root, snapshots)
  if (broken.length > 0) refuse(`${path} is not written: the format history is broken: ${broken.join('; ')}`)
  const existing = snapshots.find((s) => s.version === version)
  const latest = snapshots.at(-1)
  const previous = snapshots.filter((s) => s.version < version).at(-1)
  const golden = renderGolden(gen.model)
  if (!existing) {
    const next = latest ? latest.version + 1 : 1
    if (version !== next)
      refuse(`${path} is not written: the next snapshot is v${next}; set SESSION_FORMAT_VERSION to ${next}`)
    const traces = [goldenPath(version), `${CHANGES_DIR}/v${version}`].filter((t) =>
      existsSync(join(root, t)),
    )
    if (traces.length > 0)
      refuse(
        `${path} is missing but ${traces.join(' and ')} exist: a snapshot of format ${version} was released and deleted. Restore it from version control; it is never rebuilt around the code as it is now`,
      )
    if (latest) {
      const history = historyOf(root, gen, { loadGoldens: false })
      if (history.problems.length > 0)
        refuse(
          `${path} is not written until the history since ${latest.path} is settled: ${history.problems.join('; ')}`,
        )
    }
  } else {
    if (existing !== latest) refuse(`${path} is not the latest snapshot; a released format never changes`)
    const unchanged = stableJson(existing.catalog) === stableJson(gen.catalog)
    if (unchanged && existsSync(join(root, goldenPath(version)))) {
      return { path, golden: goldenPath(version), removedRecords: [], replaced: false }
    }
    if (!force)
      refuse(
        `${path} already exists and differs from the current catalog. A snapshot records a released format: for a breaking change bump SESSION_FORMAT_VERSION first; for compatible changes record them with --record "<why>". To rewrite an unreleased snapshot on purpose, add --force.`,
      )
    // --force rewrites an unreleased snapshot, but never absorbs a breaking change — neither
    // one against the snapshot nor a committed state kept in a record: logs written under the
    // snapshot, or by a committed build since, would silently stop reading.
    const { breaking } = recordProblems(existing, gen.catalog, readRecords(root), 'the code')
    const direct = diffCatalogs(existing.catalog, gen.catalog).filter((d) => d.classification === 'breaking')
    const absorbed = [...new Set([...direct.map((d) => d.event), ...breaking])].sort()
    if (absorbed.length > 0)
      refuse(
        `${path}: --force cannot absorb a breaking change (${absorbed.map((e) => direct.find((d) => d.event === e)?.changes.join('; ') ?? `${e}: a committed state kept in its change record`).join(' | ')}). Logs written under format ${version} would no longer read: set SESSION_FORMAT_VERSION to ${version + 1}, register a migration from ${version}, then run --snapshot`,
      )
  }
  provenGolden(root, gen, version, golden)
  const removed: string[] = []
  if (existing && previous) {
    // The records against this version fold into those against the previous one.
    const records = readRecords(root)
    const notes = new Map(records.map((r) => [r.record?.event, r.record?.note]))
    const earlier = new Map(
      records
        .filter((r) => r.record?.base === previous.version)
        .map((r): [string, ChangeRecord | undefined] => [r.path, r.record]),
    )
    const drafts = draftRecords(previous, gen.catalog, earlier, '')
    for (const [rel, text] of Object.entries(drafts)) {
      const r = JSON.parse(text) as ChangeRecord
      if (r.note === PLACEHOLDER_NOTE && notes.get(r.event))
        drafts[rel] = recordJson({ ...r, note: notes.get(r.event)! })
      else if (r.note === PLACEHOLDER_NOTE)
        refuse(`${rel} needs a note before ${path} is rewritten: run --record "<why>" first`)
    }
    writeFiles(root, drafts)
  }
  if (existing && existsSync(join(root, CHANGES_DIR, `v${version}`))) {
    rmSync(join(root, CHANGES_DIR, `v${version}`), { recursive: true })
    removed.push(`${CHANGES_DIR}/v${version}/`)
  }
  writeFiles(root, { [goldenPath(version)]: golden })
  writeFiles(root, { [path]: sealedSnapshot(gen.catalog, sealPartsFor(root, version, previous)) })
  return { path, golden: goldenPath(version), removedRecords: removed, replaced: existing !== undefined }
}

export interface GenerateAndWriteOptions extends GenerateOptions {
  snapshot?: boolean
  force?: boolean
  /** Draft change records with this note. */
  record?: string
  /** Report what would be written, write nothing. */
  dryRun?: boolean
}

/**
 * What `pnpm gen-persistence-catalog` does: generate; keep in the change records the committed
 * states that a worse change replaces; draft records (`record`); write the generated files;
 * snapshot (`snapshot`); render the format reference from what is then on disk. Returns the
 * lines to print and the history problems verify would still report (golden logs not loaded).
 */
export function generateAndWrite(options: GenerateAndWriteOptions): {
  gen: GeneratedCatalog
  lines: string[]
  history: HistoryReport
} {
  const { root } = options
  const gen = generateCatalog(options)
  const lines: string[] = []
  const differs = (rel: string, content: string) =>
    !existsSync(join(root, rel)) || readFileSync(join(root, rel), 'utf8') !== content
  const write = (files: Record<string, string>) =>
    options.dryRun ? Object.keys(files).filter((rel) => differs(rel, files[rel]!)) : writeFiles(root, files)
  const latest = readSnapshots(root).at(-1)
  const stored = new Map(readRecords(root).map((r): [string, ChangeRecord | undefined] => [r.path, r.record]))
  const kept = supersede(committedCatalog(root, CATALOG_JSON), gen.catalog, latest, stored)
  for (const [rel, record] of kept) {
    stored.set(rel, record)
    lines.push(
      `${options.dryRun ? 'would keep' : 'kept'} a committed state of ${record.event} in ${rel}: it changed since the committed catalog worse than since ${latest!.path} (${record.superseded!.at(-1)!.classification}: ${record.superseded!.at(-1)!.changes.join('; ')})`,
    )
  }
  write(Object.fromEntries([...kept].map(([rel, r]) => [rel, recordJson(r)])))
  if (options.record !== undefined && latest) {
    const written = write(draftRecords(latest, gen.catalog, stored, options.record))
    for (const w of written) lines.push(`${options.dryRun ? 'would draft' : 'drafted'} ${w}`)
    if (written.length === 0) lines.push('no change record needed drafting')
  }
  const changed = write(gen.files)
  if (options.snapshot && !options.dryRun) {
    const snap = writeSnapshot(root, gen, options.force ?? false)
    lines.push(`${snap.replaced ? 'rewrote' : 'wrote'} ${snap.path} and ${snap.golden}`)
    for (const r of snap.removedRecords) lines.push(`removed change records folded into the snapshot: ${r}`)
  }
  gen.files[FORMAT_REFERENCE] = renderFormatReference(root, gen.model.formatVersion)
  changed.push(...write({ [FORMAT_REFERENCE]: gen.files[FORMAT_REFERENCE] }))
  for (const c of changed) lines.push(`${options.dryRun ? 'would write' : 'wrote'} ${c}`)
  const tr = gen.translations
  if (tr.missing.length > 0)
    lines.push(
      `${tr.missing.length} description(s) have no Chinese translation (see ${TRANSLATIONS_ZH}): ${tr.missing.join(', ')}`,
    )
  for (const k of tr.stale)
    lines.push(
      `stale Chinese translation (its English source changed): ${k}; new source ${sourceOf(gen.model, k)}`,
    )
  lines.push(
    `persistence catalog: ${gen.model.events.length} events, ${Object.keys(gen.catalog.types).length} types, format version ${gen.model.formatVersion}${changed.length === 0 ? ` (no file ${options.dryRun ? 'would change' : 'changed'})` : ''}`,
  )
  const history = historyOf(root, gen, { loadGoldens: false })
  return { gen, lines, history }
}
