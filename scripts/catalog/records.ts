// Change records (`docs/persistence/changes/v<N>/<entry>.json`): where each lives, reading
// them, drafting the ones the code needs, and their file layout.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MachineCatalog } from './catalog-json.js'
import { type Classification, diffCatalogs } from './diff.js'
import { readSnapshots } from './snapshots.js'

export const CHANGES_DIR = 'docs/persistence/changes'

/** A change record as stored. */
export interface ChangeRecord {
  base: number
  event: string
  from: string | null
  to: string | null
  classification: Classification
  changes: string[]
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
        out.push({ path, record: undefined, error: (e as Error).message })
      }
    }
  }
  return out
}

/** Drafts (or redrafts) the change records the current code needs. Returns files to write. */
export function draftRecords(root: string, catalog: MachineCatalog, note: string): Record<string, string> {
  const snapshots = readSnapshots(root)
  const latest = snapshots[snapshots.length - 1]
  if (!latest) return {}
  const existing = new Map(readRecords(root).map((r) => [r.path, r.record]))
  const out: Record<string, string> = {}
  for (const d of diffCatalogs(latest.catalog, catalog)) {
    const path = recordPath(latest.version, d.event)
    const old = existing.get(path)
    const record: ChangeRecord = {
      base: latest.version,
      event: d.event,
      from: d.from,
      to: d.to,
      classification: d.classification,
      changes: d.changes,
      note: note.trim() !== '' ? note : old?.note && old.note.trim() !== '' ? old.note : PLACEHOLDER_NOTE,
    }
    const same =
      old &&
      old.from === record.from &&
      old.to === record.to &&
      old.classification === record.classification &&
      JSON.stringify(old.changes) === JSON.stringify(record.changes) &&
      old.note &&
      old.note !== PLACEHOLDER_NOTE
    if (!same) out[path] = recordJson(record)
  }
  return out
}

/**
 * A change record as its file content: key order fixed for reading, laid out the way the
 * repository's formatter (Biome, line width 110) lays out JSON, so `pnpm lint` accepts it.
 */
export function recordJson(r: ChangeRecord): string {
  const oneLine = `[${r.changes.map((c) => JSON.stringify(c)).join(', ')}]`
  const changes =
    r.changes.length === 0
      ? '[]'
      : `  "changes": ${oneLine},`.length <= 110
        ? oneLine
        : `[\n${r.changes.map((c) => `    ${JSON.stringify(c)}`).join(',\n')}\n  ]`
  const lines = [
    `  "base": ${r.base},`,
    `  "event": ${JSON.stringify(r.event)},`,
    `  "classification": ${JSON.stringify(r.classification)},`,
    `  "from": ${JSON.stringify(r.from)},`,
    `  "to": ${JSON.stringify(r.to)},`,
    `  "changes": ${changes},`,
    `  "note": ${JSON.stringify(r.note)}`,
  ]
  return `{\n${lines.join('\n')}\n}\n`
}
