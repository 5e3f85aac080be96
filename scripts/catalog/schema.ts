// JSON Schema (draft 2020-12) of an event payload, from the normalized class graph.
// Named and recursive classes go to `$defs` (named by their type name, or `T<digest prefix>`
// when unnamed or when two different classes share a name); the rest is inlined.
import type { Canonical } from './canonical.js'
import type { Refinements } from './refinements.js'

export type JsonSchema = { [key: string]: unknown } | boolean

/** Classes that sit on a cycle (need a `$defs` entry to be expressible). */
export function cyclicClasses(canonical: Canonical): Set<number> {
  const { children } = canonical
  const n = children.length
  // Tarjan's SCC, iterative.
  const index = new Array<number>(n).fill(-1)
  const low = new Array<number>(n).fill(0)
  const onStack = new Array<boolean>(n).fill(false)
  const stack: number[] = []
  const out = new Set<number>()
  let counter = 0
  for (let start = 0; start < n; start++) {
    if (index[start] !== -1) continue
    const work: Array<[number, number]> = [[start, 0]]
    while (work.length > 0) {
      const frame = work[work.length - 1]!
      const [v, i] = frame
      if (i === 0) {
        index[v] = low[v] = counter++
        stack.push(v)
        onStack[v] = true
      }
      const kids = children[v]!
      if (i < kids.length) {
        frame[1] = i + 1
        const w = kids[i]!
        if (index[w] === -1) work.push([w, 0])
        else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!)
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work[work.length - 1]![0]
        low[parent] = Math.min(low[parent]!, low[v]!)
      }
      if (low[v] === index[v]) {
        const comp: number[] = []
        let w: number
        do {
          w = stack.pop()!
          onStack[w] = false
          comp.push(w)
        } while (w !== v)
        if (comp.length > 1 || children[v]!.includes(v)) for (const c of comp) out.add(c)
      }
    }
  }
  return out
}

/** JSON Schema keywords of the refinements (`uniqueBy` is not JSON Schema: `x-uniqueBy`). */
function refinementSchema(r: Refinements | undefined): { [key: string]: unknown } {
  if (!r) return {}
  const out: { [key: string]: unknown } = {}
  for (const [k, v] of Object.entries(r)) {
    if (k === 'integer') continue
    if (k === 'uniqueBy') out['x-uniqueBy'] = v
    else out[k] = v
  }
  return out
}

function refineWithout(r: { [key: string]: unknown }, key: string): { [key: string]: unknown } {
  const { [key]: _drop, ...rest } = r
  return rest
}

/** Builds payload schemas; one instance per catalog so def names are consistent. */
export class SchemaBuilder {
  readonly #canonical: Canonical
  readonly #cyclic: Set<number>
  readonly #defName = new Map<number, string>()

  constructor(canonical: Canonical, reachable: readonly number[]) {
    this.#canonical = canonical
    this.#cyclic = cyclicClasses(canonical)
    const byName = new Map<string, number[]>()
    for (const c of reachable) {
      const cls = canonical.classes[c]!
      const name = cls.names[0]
      if (
        name &&
        (cls.kind === 'object' || cls.kind === 'union' || cls.kind === 'tuple' || cls.kind === 'array')
      ) {
        byName.set(name, [...(byName.get(name) ?? []), c])
      }
    }
    for (const [name, ids] of byName) {
      for (const c of ids) {
        const safe = name.replace(/[^A-Za-z0-9_]/g, '_')
        this.#defName.set(c, ids.length === 1 ? safe : `${safe}_${canonical.classes[c]!.digest.slice(0, 8)}`)
      }
    }
    for (const c of this.#cyclic) {
      if (!this.#defName.has(c)) this.#defName.set(c, `T${canonical.classes[c]!.digest.slice(0, 12)}`)
    }
  }

  /** The full schema of the payload rooted at `root`. */
  schemaOf(root: number): JsonSchema {
    const defs = new Map<string, JsonSchema>()
    const pending: number[] = []
    const body = this.#inline(root, defs, pending, true)
    while (pending.length > 0) {
      const c = pending.pop()!
      const name = this.#defName.get(c)!
      if (defs.has(name)) continue
      defs.set(name, true)
      defs.set(name, this.#inline(c, defs, pending, true))
    }
    const out: { [key: string]: unknown } = { $schema: 'https://json-schema.org/draft/2020-12/schema' }
    if (typeof body === 'boolean') out.not = body ? false : {}
    else Object.assign(out, body)
    if (defs.size > 0) {
      const sorted: { [key: string]: JsonSchema } = {}
      for (const k of [...defs.keys()].sort()) sorted[k] = defs.get(k)!
      out.$defs = sorted
    }
    return out
  }

  #ref(c: number, defs: Map<string, JsonSchema>, pending: number[]): JsonSchema {
    const name = this.#defName.get(c)
    if (name !== undefined) {
      if (!defs.has(name)) pending.push(c)
      return { $ref: `#/$defs/${name}` }
    }
    return this.#inline(c, defs, pending, false)
  }

  #inline(c: number, defs: Map<string, JsonSchema>, pending: number[], top: boolean): JsonSchema {
    if (!top && this.#defName.has(c)) return this.#ref(c, defs, pending)
    const cls = this.#canonical.classes[c]!
    const kids = this.#canonical.children[c]!
    const r = cls.rep
    const refine = refinementSchema(r.refine)
    switch (r.kind) {
      case 'string':
      case 'number':
        if (r.refine?.integer) {
          const { type: _drop, ...rest } = refine
          return { type: 'integer', ...rest }
        }
        return { type: r.kind, ...refine }
      case 'boolean':
      case 'null':
        return { type: r.kind }
      case 'unknown':
        return {}
      case 'never':
        return false
      case 'literal':
        return { const: r.value }
      case 'template': {
        const out: { [key: string]: unknown } = { type: 'string', description: `template literal ${r.text}` }
        if (r.templatePattern !== undefined) out.pattern = r.templatePattern
        // A @pattern tag narrows further: both must match.
        if (r.refine?.pattern !== undefined)
          return { allOf: [out, { pattern: r.refine.pattern }], ...refineWithout(refine, 'pattern') }
        return { ...out, ...refine }
      }
      case 'array':
        return { type: 'array', items: this.#ref(kids[0]!, defs, pending), ...refine }
      case 'tuple': {
        const items = r.elements!.map((e, i) => ({ e, s: this.#ref(kids[i]!, defs, pending) }))
        // A rest element is last: the graph builder refuses one before fixed elements, whose
        // suffix JSON Schema cannot place.
        const fixed = items.filter((x) => !x.e.rest)
        const rest = items.find((x) => x.e.rest)
        const minItems = fixed.filter((x) => !x.e.optional).length
        const out: { [key: string]: unknown } = {
          type: 'array',
          prefixItems: fixed.map((x) => x.s),
          minItems,
        }
        if (rest) {
          out.items = rest.s
        } else {
          out.items = false
          out.maxItems = fixed.length
        }
        return out
      }
      case 'object': {
        const properties: { [key: string]: JsonSchema } = {}
        const required: string[] = []
        r.props!.forEach((p, i) => {
          properties[p.name] = this.#ref(kids[i]!, defs, pending)
          if (!p.optional) required.push(p.name)
        })
        const out: { [key: string]: unknown } = { type: 'object', properties }
        if (required.length > 0) out.required = required.sort()
        out.additionalProperties =
          r.index !== undefined ? this.#ref(kids[r.props!.length]!, defs, pending) : false
        return out
      }
      case 'union':
        return { anyOf: kids.map((k) => this.#ref(k, defs, pending)) }
    }
    return {}
  }
}
