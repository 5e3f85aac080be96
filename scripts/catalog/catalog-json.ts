// The machine schema catalog (`docs/persistence-catalog.json`) and helpers over its type table.
import type { ShallowForm } from './canonical.js'
import { sha256 } from './digest.js'
import type { SourceModel } from './model.js'
import { type JsonSchema, SchemaBuilder } from './schema.js'

export interface CatalogEvent {
  owner: string
  surface: boolean
  source: string
  /** SHA-256 of the payload's canonical form (covers every referenced type). */
  digest: string
  schema: JsonSchema
}

export interface CatalogType {
  names?: string[]
  sources?: string[]
  form: ShallowForm
}

export interface MachineCatalog {
  catalog: 'keel-session-persistence'
  catalogVersion: 1
  formatVersion: number
  digestAlgorithm: string
  header?: { name: string; source: string; digest: string; schema: JsonSchema }
  /**
   * The rest of the persisted format, by entry: `(envelope)`, `(header)` (also above), each
   * store's physical type (`(jsonl-header)`, …). Fingerprinted and diffed like events.
   */
  format?: Record<
    string,
    { name: string; module: string; source: string; digest: string; schema: JsonSchema }
  >
  /** The surface event types; a change to the set changes how every log reads. */
  surface?: { types: string[]; digest: string }
  events: Record<string, CatalogEvent>
  types: Record<string, CatalogType>
}

export type TypeTable = Record<string, CatalogType>

export const DIGEST_ALGORITHM = 'SHA-256 of fast-json-stable-stringify(canonical form)'

/** Builds the machine catalog from the source model. */
export function buildMachineCatalog(model: SourceModel): MachineCatalog {
  const { canonical } = model
  const schemas = new SchemaBuilder(canonical, model.reachable)
  const events: Record<string, CatalogEvent> = {}
  for (const e of model.events) {
    events[e.type] = {
      owner: e.owner,
      surface: e.surface,
      source: e.ref,
      digest: canonical.classes[e.rootClass]!.digest,
      schema: schemas.schemaOf(e.rootClass),
    }
  }
  const types: TypeTable = {}
  for (const c of model.reachable) {
    const cls = canonical.classes[c]!
    const entry: CatalogType = { form: canonical.shallow(c) }
    if (cls.names.length > 0) entry.names = cls.names
    if (cls.sources.length > 0) entry.sources = cls.sources
    types[cls.digest] = entry
  }
  const out: MachineCatalog = {
    catalog: 'keel-session-persistence',
    catalogVersion: 1,
    formatVersion: model.formatVersion,
    digestAlgorithm: DIGEST_ALGORITHM,
    events,
    types,
  }
  if (model.format.length > 0) {
    out.format = {}
    for (const f of model.format) {
      out.format[f.entry] = {
        name: f.name,
        module: f.module,
        source: f.loc,
        digest: canonical.classes[f.classId]!.digest,
        schema: schemas.schemaOf(f.classId),
      }
    }
  }
  out.surface = { types: model.surfaceTypes, digest: sha256(JSON.stringify(model.surfaceTypes)) }
  if (model.header) {
    out.header = {
      name: 'SessionHeader',
      source: model.header.loc,
      digest: canonical.classes[model.header.classId]!.digest,
      schema: schemas.schemaOf(model.header.classId),
    }
  }
  return out
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k])
    return out
  }
  return value
}

/** Pretty JSON with sorted keys and a final newline: byte-stable across runs and machines. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`
}

/** A short human rendering of a type from a type table: its name, or an inline form. */
export function displayType(table: TypeTable, digest: string, depth = 0): string {
  const t = table[digest]
  if (!t) return `<${digest.slice(0, 12)}>`
  if (t.names && t.names.length > 0) return t.names[0]!
  const f = t.form
  const sub = (d: string) => (depth > 2 ? '…' : displayType(table, d, depth + 1))
  switch (f.k) {
    case 'literal':
      return f.e !== undefined ? `${f.e} = ${JSON.stringify(f.v)}` : JSON.stringify(f.v)
    case 'template':
      return f.text
    case 'array': {
      const inner = sub(f.of)
      return / \| /.test(inner) && !inner.startsWith('{') ? `(${inner})[]` : `${inner}[]`
    }
    case 'tuple':
      return `[${f.items.map((i) => (i.rest ? `...${sub(i.t)}[]` : `${sub(i.t)}${i.opt ? '?' : ''}`)).join(', ')}]`
    case 'object': {
      const names = Object.keys(f.props).sort()
      if (names.length === 0 && f.index === undefined) return '{}'
      const parts = names.slice(0, 4).map((n) => {
        const p = f.props[n]!
        const child = table[p.t]
        const lit = child?.form.k === 'literal' ? `: ${JSON.stringify(child.form.v)}` : ''
        return `${n}${p.opt ? '?' : ''}${lit}`
      })
      if (names.length > 4) parts.push('…')
      if (f.index !== undefined) parts.push(`[key: string]: ${sub(f.index)}`)
      return `{ ${parts.join(', ')} }`
    }
    case 'union':
      return f.of
        .map(sub)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .join(' | ')
    default:
      return f.k
  }
}
