// The structural diff of two machine catalogs, entry by entry, each change in words and
// classified by one question: can this build still read every log written under the old
// catalog? (the table: docs/guides/persistence-catalog.md, "Classification").
import { displayType, type MachineCatalog, type TypeTable } from './catalog-json.js'
import type { Refinements } from './refinements.js'

export type Classification = 'additive' | 'widening' | 'breaking'

export const RANK: Record<Classification, number> = { additive: 0, widening: 1, breaking: 2 }

export const HEADER_ENTRY = '(header)'

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
