// Change records (`docs/persistence/changes/v<N>/<entry>.json`): where each lives, reading
// them, what the code says each must hold, drafting them, and their file layout. A record
// describes one entry's change since snapshot vN. `superseded` keeps the states of the entry
// that were committed since the snapshot and then changed incompatibly (see committed.ts):
// logs may have been written with them, so they count in the classification.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorMessage } from '@keel/base'
import type { MachineCatalog } from './catalog-json.js'
import { type Classification, diffCatalogs, type EntryDiff, RANK } from './diff.js'

export const CHANGES_DIR = 'docs/persistence/changes'

/** A committed state of the entry, replaced since by a change worse than its change since the snapshot. */
export interface Superseded {
  /** The entry's digest in that state (null: the entry did not exist). */
  to: string | null
  /** How the change from that state to the next committed one is classified. */
  classification: Classification
  changes: string[]
}

/** A change record as stored. */
export interface ChangeRecord {
  base: number
  event: string
  from: string | null
  to: string | null
  /** The worst of the change since the snapshot and of every superseded state's change. */
  classification: Classification
  changes: string[]
  superseded?: Superseded[]
  note: string
}

export const PLACEHOLDER_NOTE = 'TODO: say why this changed and what readers of old logs should expect'

/**
 * The record file of an entry. Injective: event types are lower-case kebab segments joined by
 * `/` (no `_`, checked by gen and at registration), so `a/b` → `a__b` cannot meet another
 * event's name, and the format entries `(name)` → `_name` start with the one character no
 * event type has.
 */
export function recordPath(base: number, event: string): string {
  const format = /^\(([a-z-]+)\)$/.exec(event)
  if (!format && !/^[a-z0-9-]+(\/[a-z0-9-]+)+$/.test(event)) {
    throw new Error(`no change record file name for entry '${event}': not an event type or a format entry`)
  }
  const slug = format ? `_${format[1]}` : event.replace(/\//g, '__')
  return `${CHANGES_DIR}/v${base}/${slug}.json`
}

export interface StoredRecord {
  path: string
  record: ChangeRecord | undefined
  error?: string
}

/** Every stored change record (all bases), sorted by path. */
export function readRecords(root: string): StoredRecord[] {
  const dir = join(root, CHANGES_DIR)
  if (!existsSync(dir)) return []
  const out: StoredRecord[] = []
  for (const sub of readdirSync(dir).sort()) {
    if (!/^v\d+$/.test(sub)) continue
    for (const f of readdirSync(join(dir, sub)).sort()) {
      if (!f.endsWith('.json')) continue
      const path = `${CHANGES_DIR}/${sub}/${f}`
      try {
        out.push({ path, record: JSON.parse(readFileSync(join(root, path), 'utf8')) as ChangeRecord })
      } catch (e) {
        out.push({ path, record: undefined, error: errorMessage(e) })
      }
    }
  }
  return out
}

const worst = (a: Classification, b: Classification): Classification => (RANK[b] > RANK[a] ? b : a)

/**
 * What the record of `event` against `base` must hold, from the entry's diff since the
 * snapshot (undefined when it equals the snapshot) and the superseded states kept so far.
 * A superseded state equal to the entry's current one is void (its logs read as they are).
 * Undefined when no record is needed.
 */
export function expectedRecord(
  base: number,
  event: string,
  diff: EntryDiff | undefined,
  snapshotDigest: string | null,
  superseded: readonly Superseded[] = [],
): Omit<ChangeRecord, 'note'> | undefined {
  const to = diff ? diff.to : snapshotDigest
  const kept = superseded.filter((s) => s.to !== to)
  if (!diff && kept.length === 0) return undefined
  const classification = kept.reduce<Classification>(
    (acc, s) => worst(acc, s.classification),
    diff?.classification ?? 'additive',
  )
  return {
    base,
    event,
    from: diff ? diff.from : snapshotDigest,
    to,
    classification,
    changes: diff?.changes ?? [],
    ...(kept.length > 0 ? { superseded: kept } : {}),
  }
}

/** The digest of each entry of a catalog (events and format entries). */
export function entryDigest(catalog: MachineCatalog, entry: string): string | null {
  if (entry === '(surface)') return catalog.surface?.digest ?? null
  if (entry === '(header)') return catalog.header?.digest ?? null
  return catalog.events[entry]?.digest ?? catalog.format?.[entry]?.digest ?? null
}

/**
 * Drafts (or redrafts) the records the current code needs against snapshot `base`, keeping the
 * superseded states and notes of `existing` (path → record). `note` goes to the records that
 * are new or whose change grew (after an existing note, as `Later: …`); a record already as
 * the code says keeps its own. Returns the files to write.
 */
export function draftRecords(
  base: { version: number; catalog: MachineCatalog },
  catalog: MachineCatalog,
  existing: ReadonlyMap<string, ChangeRecord | undefined>,
  note: string,
): Record<string, string> {
  const out: Record<string, string> = {}
  const diffs = new Map(diffCatalogs(base.catalog, catalog).map((d) => [d.event, d]))
  const events = new Set(diffs.keys())
  for (const [path, r] of existing) {
    if (
      r &&
      r.base === base.version &&
      path === recordPath(base.version, r.event) &&
      (r.superseded?.length ?? 0) > 0
    )
      events.add(r.event)
  }
  for (const event of [...events].sort()) {
    const path = recordPath(base.version, event)
    const old = existing.get(path)
    const want = expectedRecord(
      base.version,
      event,
      diffs.get(event),
      entryDigest(base.catalog, event),
      old?.superseded,
    )
    if (!want) continue
    const keep = old?.note && old.note.trim() !== '' ? old.note : PLACEHOLDER_NOTE
    // a record whose change is as recorded keeps its note: the given one is for what changed
    const same = old !== undefined && recordJson({ ...old, note: '' }) === recordJson({ ...want, note: '' })
    const given = note.trim() !== ''
    const written = !given || same ? keep : keep === PLACEHOLDER_NOTE ? note : `${keep} Later: ${note}`
    const record: ChangeRecord = { ...want, note: written }
    if (!old || recordJson(old) !== recordJson(record)) out[path] = recordJson(record)
  }
  return out
}

/** A JSON array of strings, on one line when it fits in `width` after `prefix`, else one per line. */
function stringList(items: readonly string[], prefix: string, indent: string): string {
  if (items.length === 0) return '[]'
  const oneLine = `[${items.map((c) => JSON.stringify(c)).join(', ')}]`
  if (`${prefix}${oneLine},`.length <= 110) return oneLine
  return `[\n${items.map((c) => `${indent}  ${JSON.stringify(c)}`).join(',\n')}\n${indent}]`
}

/**
 * A change record as its file content: key order fixed for reading, laid out the way the
 * repository's formatter (Biome, line width 110) lays out JSON, so `pnpm lint` accepts it.
 */
export function recordJson(r: ChangeRecord): string {
  const lines = [
    `  "base": ${r.base},`,
    `  "event": ${JSON.stringify(r.event)},`,
    `  "classification": ${JSON.stringify(r.classification)},`,
    `  "from": ${JSON.stringify(r.from)},`,
    `  "to": ${JSON.stringify(r.to)},`,
    `  "changes": ${stringList(r.changes, '  "changes": ', '  ')},`,
  ]
  if (r.superseded && r.superseded.length > 0) {
    const entries = r.superseded.map((s) =>
      [
        '    {',
        `      "to": ${JSON.stringify(s.to)},`,
        `      "classification": ${JSON.stringify(s.classification)},`,
        `      "changes": ${stringList(s.changes, '      "changes": ', '      ')}`,
        '    }',
      ].join('\n'),
    )
    lines.push(`  "superseded": [\n${entries.join(',\n')}\n  ],`)
  }
  lines.push(`  "note": ${JSON.stringify(r.note)}`)
  return `{\n${lines.join('\n')}\n}\n`
}
