// Format history: snapshots (`docs/persistence/formats/v<N>.json`), change records
// (`docs/persistence/changes/v<N>/<event>.json`), the structural diff that classifies a change,
// and the generated format reference.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { displayType, type MachineCatalog, type TypeTable } from './catalog-json.js'
import { missingGolden } from './golden.js'
import { FORMATS_DIR, readSnapshots, snapshotProblems } from './snapshots.js'

export { readSnapshots, type Snapshot, sealedSnapshot } from './snapshots.js'

import type { Refinements } from './normalize.js'

export type Classification = 'additive' | 'widening' | 'breaking'

const RANK: Record<Classification, number> = { additive: 0, widening: 1, breaking: 2 }

export const HEADER_ENTRY = '(header)'
export { FORMATS_DIR } from './snapshots.js'
export const CHANGES_DIR = 'docs/persistence/changes'
export const FORMAT_REFERENCE = 'docs/persistence/format-reference.md'

/** One change found by the structural diff, in words. */
export interface Change {
  text: string
  severity: Classification
}

/** How one event (or the header) differs between two catalogs. */
export interface EntryDiff {
  event: string
  from: string | null
  to: string | null
  /** The worst class of the changes (what the entry as a whole needs). */
  classification: Classification
  changes: string[]
  /** Each change with its own class, sorted by text. */
  classified?: Change[]
}

function dedupe(changes: Change[]): Change[] {
  const byText = new Map<string, Change>()
  for (const c of changes) {
    const seen = byText.get(c.text)
    if (!seen || RANK[c.severity] > RANK[seen.severity]) byText.set(c.text, c)
  }
  return [...byText.values()].sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
}

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

export const SURFACE_ENTRY = '(surface)'

function entries(c: MachineCatalog): Map<string, string> {
  const m = new Map<string, string>()
  for (const [k, v] of Object.entries(c.events)) m.set(k, v.digest)
  if (c.header) m.set(HEADER_ENTRY, c.header.digest)
  for (const [k, v] of Object.entries(c.format ?? {})) m.set(k, v.digest)
  if (c.surface) m.set(SURFACE_ENTRY, c.surface.digest)
  return m
}

/** Structural diff of two catalogs, entry by entry (sorted by event type). */
export function diffCatalogs(oldCat: MachineCatalog, newCat: MachineCatalog): EntryDiff[] {
  const a = entries(oldCat)
  const b = entries(newCat)
  const names = [...new Set([...a.keys(), ...b.keys()])].sort()
  const out: EntryDiff[] = []
  for (const name of names) {
    const from = a.get(name) ?? null
    const to = b.get(name) ?? null
    if (from === to) continue
    if (from === null) {
      const what = name.startsWith('(') ? 'newly fingerprinted format entry' : 'new event type'
      out.push({ event: name, from, to, classification: 'additive', changes: [`${name}: ${what}`] })
      continue
    }
    if (to === null) {
      out.push({
        event: name,
        from,
        to,
        classification: 'breaking',
        changes: [`${name}: ${name.startsWith('(') ? 'format entry removed' : 'event type removed'}`],
      })
      continue
    }
    const changes: Change[] = []
    if (name === SURFACE_ENTRY) {
      // Adding or removing a surface type changes which events the model sees: old logs
      // would derive different messages, so either way it is breaking.
      const before = oldCat.surface?.types ?? []
      const after = newCat.surface?.types ?? []
      for (const t of before.filter((x) => !after.includes(x)))
        changes.push({ text: `surface: '${t}' is no longer a surface event type`, severity: 'breaking' })
      for (const t of after.filter((x) => !before.includes(x)))
        changes.push({ text: `surface: '${t}' became a surface event type`, severity: 'breaking' })
    } else diffTypes(oldCat.types, from, newCat.types, to, '', name, changes, new Set())
    if (changes.length === 0) changes.push({ text: `${name}: structure changed`, severity: 'breaking' })
    const classification = changes.reduce<Classification>(
      (acc, c) => (RANK[c.severity] > RANK[acc] ? c.severity : acc),
      'additive',
    )
    out.push({
      event: name,
      from,
      to,
      classification,
      changes: [...new Set(changes.map((c) => c.text))].sort(),
      classified: dedupe(changes),
    })
  }
  return out
}

function where(event: string, path: string): string {
  if (event === HEADER_ENTRY) return path === '' ? 'header' : `header${path}`
  if (event.startsWith('(')) return `${event}${path}`
  return path === '' ? event : `${event}.data${path}`
}

function diffTypes(
  ot: TypeTable,
  od: string,
  nt: TypeTable,
  nd: string,
  path: string,
  event: string,
  out: Change[],
  seen: Set<string>,
): void {
  if (od === nd) return
  const key = `${od}>${nd}`
  if (seen.has(key)) return
  seen.add(key)
  const o = ot[od]?.form
  const n = nt[nd]?.form
  const at = where(event, path)
  const show = (t: TypeTable, d: string) => displayType(t, d)
  const changed = (severity: Classification = 'breaking'): void => {
    out.push({ text: `${at}: ${show(ot, od)} → ${show(nt, nd)}`, severity })
  }
  if (!o || !n) {
    changed()
    return
  }
  if (o.k === 'object' && n.k === 'object') {
    const names = [...new Set([...Object.keys(o.props), ...Object.keys(n.props)])].sort()
    for (const name of names) {
      const op = o.props[name]
      const np = n.props[name]
      if (!op && np) {
        out.push(
          np.opt
            ? { text: `${at}: property added: ${name}?`, severity: 'additive' }
            : { text: `${at}: required property added: ${name}`, severity: 'breaking' },
        )
      } else if (op && !np) {
        out.push({ text: `${at}: property removed: ${name}${op.opt ? '?' : ''}`, severity: 'breaking' })
      } else if (op && np) {
        if (op.opt && !np.opt) out.push({ text: `${at}.${name}: optional → required`, severity: 'breaking' })
        if (!op.opt && np.opt) out.push({ text: `${at}.${name}: required → optional`, severity: 'widening' })
        diffTypes(ot, op.t, nt, np.t, `${path}.${name}`, event, out, seen)
      }
    }
    if (o.index && !n.index) out.push({ text: `${at}: index signature removed`, severity: 'breaking' })
    if (!o.index && n.index) out.push({ text: `${at}: index signature added`, severity: 'widening' })
    if (o.index && n.index) diffTypes(ot, o.index, nt, n.index, `${path}[key]`, event, out, seen)
    return
  }
  if (o.k === n.k && (o.k === 'string' || o.k === 'number' || o.k === 'array' || o.k === 'template')) {
    const or = (o as { r?: Refinements }).r
    const nr = (n as { r?: Refinements }).r
    const before = out.length
    diffRefinements(or, nr, at, out)
    if (o.k === 'array' && n.k === 'array') diffTypes(ot, o.of, nt, n.of, `${path}[]`, event, out, seen)
    else if (o.k === 'template' && n.k === 'template' && o.text !== n.text) changed()
    else if (out.length === before && stableKey(or) !== stableKey(nr)) changed()
    return
  }
  if (o.k === 'tuple' && n.k === 'tuple') {
    const sameFlags = (i: number) =>
      !!o.items[i]!.opt === !!n.items[i]!.opt && !!o.items[i]!.rest === !!n.items[i]!.rest
    const prefix = o.items.length <= n.items.length && o.items.every((_, i) => sameFlags(i))
    // Optional elements appended after every old one (no rest in the old tuple): every old
    // tuple still reads.
    const appendedOptional =
      prefix && !o.items.some((x) => x.rest) && n.items.slice(o.items.length).every((x) => x.opt || x.rest)
    if (!prefix || (n.items.length > o.items.length && !appendedOptional)) {
      changed()
      return
    }
    for (let i = o.items.length; i < n.items.length; i++) {
      out.push({ text: `${at}[${i}]: optional element added`, severity: 'widening' })
    }
    o.items.forEach((x, i) => {
      diffTypes(ot, x.t, nt, n.items[i]!.t, `${path}[${i}]`, event, out, seen)
    })
    return
  }
  if (o.k === 'never') {
    changed('widening')
    return
  }
  if (o.k === 'template' && n.k === 'string' && !n.r) {
    changed('widening')
    return
  }
  if (o.k === 'union' && n.k === 'union') {
    const removed = o.of.filter((m) => !n.of.includes(m))
    const added = n.of.filter((m) => !o.of.includes(m))
    // Members changed in place (the only change, or objects sharing a discriminant such as
    // `op: "create"`): describe the change inside them instead of "removed" + "added".
    const tags = (t: TypeTable, d: string): string[] => {
      const f = t[d]?.form
      if (f?.k !== 'object') return []
      return Object.entries(f.props)
        .filter(([, p]) => !p.opt && t[p.t]?.form.k === 'literal')
        .map(([name, p]) => `${name}=${JSON.stringify((t[p.t]!.form as { v: unknown }).v)}`)
    }
    const single = removed.length === 1 && added.length === 1
    const free = [...added]
    const unpaired: string[] = []
    for (const r of removed) {
      const rTags = tags(ot, r)
      const i = free.findIndex(
        (a) => nt[a]?.form.k === ot[r]?.form.k && (single || tags(nt, a).some((x) => rTags.includes(x))),
      )
      if (i < 0) {
        unpaired.push(r)
        continue
      }
      const before = out.length
      diffTypes(ot, r, nt, free[i]!, path, event, out, seen)
      if (out.length === before) unpaired.push(r)
      else free.splice(i, 1)
    }
    removed.splice(0, removed.length, ...unpaired)
    added.splice(0, added.length, ...free)
    for (const m of removed)
      out.push({ text: `${at}: union member removed: ${show(ot, m)}`, severity: 'breaking' })
    for (const m of added)
      out.push({ text: `${at}: union member added: ${show(nt, m)}`, severity: 'widening' })
    return
  }
  if (n.k === 'union' && n.of.includes(od)) {
    const others = n.of.filter((m) => m !== od).map((m) => show(nt, m))
    out.push({
      text: `${at}: ${show(ot, od)} → ${show(nt, nd)} (now also ${others.join(', ')})`,
      severity: 'widening',
    })
    return
  }
  const literalBase = (v: unknown) =>
    typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'boolean'
  if (o.k === 'literal' && n.k === literalBase(o.v)) {
    changed('widening')
    return
  }
  if (
    o.k === 'union' &&
    (n.k === 'string' || n.k === 'number' || n.k === 'boolean') &&
    o.of.every((m) => {
      const f = ot[m]?.form
      return f?.k === n.k || (f?.k === 'literal' && literalBase(f.v) === n.k)
    })
  ) {
    changed('widening')
    return
  }
  changed(n.k === 'unknown' ? 'widening' : 'breaking')
}

function stableKey(r: Refinements | undefined): string {
  return r ? JSON.stringify(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1))) : ''
}

/**
 * Classifies each refinement change on its own: a tightening (a new bound, a raised minimum,
 * a lowered maximum, a new or changed pattern or uniqueness rule) can refuse old logs and is
 * breaking; a loosening is widening.
 */
export function diffRefinements(
  o: Refinements | undefined,
  n: Refinements | undefined,
  at: string,
  out: Change[],
): void {
  const a: Record<string, unknown> = { ...o }
  const b: Record<string, unknown> = { ...n }
  const lower = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems'])
  const upper = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems'])
  for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const ov = a[key]
    const nv = b[key]
    if (ov === nv) continue
    const show = (v: unknown) => (v === undefined ? 'none' : v === true ? 'set' : JSON.stringify(v))
    const text = `${at}: @${key} ${show(ov)} → ${show(nv)}`
    let severity: Classification
    if (nv === undefined) severity = 'widening'
    else if (ov === undefined) severity = 'breaking'
    else if (lower.has(key)) severity = (nv as number) > (ov as number) ? 'breaking' : 'widening'
    else if (upper.has(key)) severity = (nv as number) < (ov as number) ? 'breaking' : 'widening'
    else severity = 'breaking'
    out.push({ text, severity })
  }
}

/** Every `formats/v<N>.json`, sorted by N. */

/** The record file of an event against a base version. */
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

/** Renders `docs/persistence/format-reference.md` from every snapshot and record. */
export function renderFormatReference(root: string, formatVersion: number): string {
  const snapshots = readSnapshots(root)
  const records = readRecords(root)
  const out: string[] = []
  const p = (l = '') => out.push(l)
  p('# Session format reference')
  p()
  p(
    '> Generated by `pnpm gen-persistence-catalog` from `docs/persistence/formats/` and `docs/persistence/changes/`. Do not edit by hand.',
  )
  p()
  p(
    `This build writes session format version ${formatVersion} (\`SESSION_FORMAT_VERSION\`). Each section below is one snapshot of the machine catalog (\`docs/persistence/formats/v<N>.json\`, written by \`pnpm gen-persistence-catalog --snapshot\`), followed by the change records made against it. A record's classification is computed from a structural diff of the canonical type forms by one question: can this build still read every log written under that snapshot? See \`docs/guides/persistence-catalog.md\`.`,
  )
  p()
  if (snapshots.length === 0) {
    p('No snapshot has been written yet.')
    p()
  }
  for (const s of [...snapshots].reverse()) {
    p(`## Format version ${s.version}`)
    p()
    p(
      `Snapshot: \`${s.path}\` — ${Object.keys(s.catalog.events).length} events, ${Object.keys(s.catalog.types).length} types.`,
    )
    p()
    if (s.catalog.header) {
      p(`Header (\`SessionHeader\`) SHA-256: \`${s.catalog.header.digest}\``)
      p()
    }
    p('| Event | Owner | Surface | Payload SHA-256 |')
    p('| --- | --- | --- | --- |')
    for (const [type, e] of Object.entries(s.catalog.events).sort(([a], [b]) => (a < b ? -1 : 1))) {
      p(`| \`${type}\` | \`${e.owner}\` | ${e.surface ? 'surface' : 'log-only'} | \`${e.digest}\` |`)
    }
    p()
    const mine = records.filter((r) => r.path.startsWith(`${CHANGES_DIR}/v${s.version}/`))
    p(`### Changes recorded against version ${s.version}`)
    p()
    if (mine.length === 0) {
      p('None.')
      p()
      continue
    }
    for (const r of mine) {
      const rec = r.record
      if (!rec) {
        p(`- \`${r.path}\`: unreadable (${r.error})`)
        continue
      }
      p(`- \`${rec.event}\` — **${rec.classification}** (\`${r.path}\`)`)
      p(`  - from \`${rec.from ?? '(none)'}\` to \`${rec.to ?? '(none)'}\``)
      for (const c of rec.changes ?? []) p(`  - ${c}`)
      p(`  - Note: ${rec.note}`)
    }
    p()
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop()
  return `${out.join('\n')}\n`
}
