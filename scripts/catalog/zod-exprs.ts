// The zod expressions of the generated validators, from the normalized class graph: named
// types as consts, cycles through `z.lazy`, discriminated unions where a literal property tells
// members apart. zod.ts writes them into each package's `src/events.generated.ts`; examples.ts
// evaluates the very same expressions to check every `@example` at gen.
import { reachableFrom } from './canonical.js'
import type { SourceModel } from './model.js'
import type { Refinements } from './refinements.js'
import { cyclicClasses } from './schema.js'

const IDENT = /^[A-Za-z_$][\w$]*$/

function propKey(name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name)
}

function lowerFirst(s: string): string {
  return s[0]!.toLowerCase() + s.slice(1)
}

/** A named validator const, in definition order. */
export interface ValidatorDef {
  name: string
  /** The type's name, for the doc comment. */
  typeName?: string
  /** On a cycle: declared `z.ZodType<unknown>` (TypeScript cannot infer it). */
  cyclic: boolean
  body: string
}

export interface ValidatorSource {
  defs: ValidatorDef[]
  /** The expression of each root class (a const name or an inline expression). */
  exprs: Map<number, string>
  /** Runtime helpers of `@keel/session` the expressions call (`uniqueItems`, `uniqueBy`). */
  helpers: Set<string>
  /** Tags that do not fit their type (`@uniqueBy` on items without that property). */
  problems: string[]
  /** The classes the expressions take from another module ({@link ValidatorOptions.imported}), by class. */
  imports: Map<number, string>
}

/** One const of a generated module, its doc comment first. */
export function renderDef(d: ValidatorDef): string {
  const doc = d.typeName !== undefined ? `/** Validator of {@link ${d.typeName}} (generated). */\n` : ''
  return `${doc}export const ${d.name}${d.cyclic ? ': z.ZodType<unknown>' : ''} = ${d.body}\n`
}

/** Options of {@link validatorSource}. */
export interface ValidatorOptions {
  /** Classes whose validator another module exports, with its const name: referenced, never defined. */
  imported?: ReadonlyMap<number, string>
  /** Const names fixed in advance (the names a module exports to its importers). */
  names?: ReadonlyMap<number, string>
}

/** The const a named class gets: `todoItemSchema` for `TodoItem`; `undefined` for an unnamed or plain leaf class. */
export function constNameOf(model: Pick<SourceModel, 'canonical'>, c: number): string | undefined {
  const cls = model.canonical.classes[c]!
  const name = cls.names.find((n) => IDENT.test(n))
  const composite =
    cls.kind === 'object' || cls.kind === 'union' || cls.kind === 'tuple' || cls.kind === 'array'
  return name && (composite || cls.rep.refine) ? `${lowerFirst(name)}Schema` : undefined
}

/** The zod expressions validating each of `roots` (class ids), sharing named consts. */
export function validatorSource(
  model: Pick<SourceModel, 'canonical'>,
  roots: readonly number[],
  options: ValidatorOptions = {},
): ValidatorSource {
  const { canonical } = model
  const cyclic = cyclicClasses(canonical)
  const imported = options.imported ?? new Map<number, string>()
  // Which classes get a named const: named composites (and named refined leaves), cyclic ones.
  const constName = new Map<number, string>()
  const used = new Set<string>([...imported.values(), ...(options.names?.values() ?? [])])
  const reach = reachableFrom(canonical, roots)
  for (const c of [...reach].sort((a, b) => a - b)) {
    if (imported.has(c)) continue
    const fixed = options.names?.get(c)
    if (fixed !== undefined) {
      constName.set(c, fixed)
      continue
    }
    const cls = canonical.classes[c]!
    let id = constNameOf(model, c)
    if (id === undefined && cyclic.has(c)) id = `t${cls.digest.slice(0, 12)}Schema`
    if (id === undefined) continue
    if (used.has(id)) id = `${id}_${cls.digest.slice(0, 8)}`
    used.add(id)
    constName.set(c, id)
  }
  const imports = new Map<number, string>()

  const defs: ValidatorDef[] = []
  const state = new Map<number, 'busy' | 'done'>()
  const helpers = new Set<string>()
  const problems: string[] = []

  const refineNumber = (r: Refinements | undefined): string => {
    if (!r) return ''
    let s = ''
    if (r.integer) s += '.int()'
    if (r.minimum !== undefined) s += `.gte(${r.minimum})`
    if (r.maximum !== undefined) s += `.lte(${r.maximum})`
    if (r.exclusiveMinimum !== undefined) s += `.gt(${r.exclusiveMinimum})`
    if (r.exclusiveMaximum !== undefined) s += `.lt(${r.exclusiveMaximum})`
    return s
  }
  const refineString = (r: Refinements | undefined): string => {
    if (!r) return ''
    let s = ''
    if (r.minLength !== undefined) s += `.min(${r.minLength})`
    if (r.maxLength !== undefined) s += `.max(${r.maxLength})`
    if (r.pattern !== undefined) s += `.regex(new RegExp(${JSON.stringify(r.pattern)}, 'u'))`
    return s
  }

  const ref = (c: number): string => {
    const from = imported.get(c)
    if (from !== undefined) {
      imports.set(c, from)
      return from
    }
    const name = constName.get(c)
    if (name === undefined) return expr(c)
    const st = state.get(c)
    if (st === 'done') return name
    if (st === 'busy') return `z.lazy(() => ${name})`
    define(c)
    return state.get(c) === 'done' ? name : `z.lazy(() => ${name})`
  }

  const expr = (c: number): string => {
    const r = canonical.classes[c]!.rep
    const kids = canonical.children[c]!
    switch (r.kind) {
      case 'string':
        return `z.string()${refineString(r.refine)}`
      case 'number':
        return `z.number()${refineNumber(r.refine)}`
      case 'template':
        return `z.string().regex(new RegExp(${JSON.stringify(r.templatePattern ?? '^[\\s\\S]*$')}, 'u'))${refineString(r.refine)}`
      case 'boolean':
        return 'z.boolean()'
      case 'null':
        return 'z.null()'
      case 'unknown':
        return 'z.unknown()'
      case 'never':
        return 'z.never()'
      case 'literal':
        return `z.literal(${JSON.stringify(r.value)})`
      case 'array': {
        let s = `z.array(${ref(kids[0]!)})`
        const rf = r.refine
        if (rf?.minItems !== undefined) s += `.min(${rf.minItems})`
        if (rf?.maxItems !== undefined) s += `.max(${rf.maxItems})`
        if (rf?.uniqueItems) {
          helpers.add('uniqueItems')
          s += `.refine(uniqueItems, { message: 'items must be unique' })`
        }
        if (rf?.uniqueBy !== undefined) {
          const elem = canonical.classes[kids[0]!]!.rep
          if (elem.kind !== 'object' || !elem.props!.some((p) => p.name === rf.uniqueBy && !p.optional)) {
            problems.push(
              `@uniqueBy ${rf.uniqueBy}: the items are not objects with a required '${rf.uniqueBy}'`,
            )
          }
          helpers.add('uniqueBy')
          s += `.refine((items) => uniqueBy(items, ${JSON.stringify(rf.uniqueBy)}), { message: ${JSON.stringify(`items must have unique '${rf.uniqueBy}' values`)} })`
        }
        return s
      }
      case 'tuple': {
        const els = r.elements!
        // A rest element is last (the graph builder refuses one before fixed elements).
        const restAt = els.findIndex((e) => e.rest)
        const fixed = els
          .map((e, i) => ({ e, s: ref(kids[i]!) }))
          .filter((x) => !x.e.rest)
          .map((x) => (x.e.optional ? `${x.s}.optional()` : x.s))
        return restAt >= 0
          ? `z.tuple([${fixed.join(', ')}], ${ref(kids[restAt]!)})`
          : `z.tuple([${fixed.join(', ')}])`
      }
      case 'object': {
        const props = r.props!.map((p, i) => {
          const v = ref(kids[i]!)
          return `${propKey(p.name)}: ${p.optional ? `${v}.optional()` : v}`
        })
        if (r.index !== undefined) {
          const idx = ref(kids[r.props!.length]!)
          if (props.length === 0) return `z.record(z.string(), ${idx})`
          return `z.object({ ${props.join(', ')} }).catchall(${idx})`
        }
        return `z.strictObject({ ${props.join(', ')} })`
      }
      case 'union': {
        const members = kids.map((k) => canonical.classes[k]!.rep)
        if (members.every((m) => m.kind === 'literal' && typeof m.value === 'string')) {
          const values = members.map((m) => m.value as string).sort()
          return `z.enum([${values.map((v) => JSON.stringify(v)).join(', ')}])`
        }
        const key = discriminant(kids)
        if (key !== undefined && kids.every((k) => state.get(k) !== 'busy' && !cyclic.has(k))) {
          return `z.discriminatedUnion(${JSON.stringify(key)}, [${kids.map(ref).join(', ')}])`
        }
        return `z.union([${kids.map(ref).join(', ')}])`
      }
    }
    return 'z.never()'
  }

  // A property every member (a plain object) has, required, with a literal value distinct per
  // member: zod then reports errors inside the matching member instead of "invalid input".
  const discriminant = (kids: number[]): string | undefined => {
    const members = kids.map((k) => canonical.classes[k]!.rep)
    if (members.some((m) => m.kind !== 'object' || m.index !== undefined)) return undefined
    const literalOf = (m: (typeof members)[number], i: number, name: string) => {
      const at = m.props!.findIndex((p) => p.name === name && !p.optional)
      if (at < 0) return undefined
      const v = canonical.classes[canonical.children[kids[i]!]![at]!]!.rep
      return v.kind === 'literal' ? JSON.stringify(v.value) : undefined
    }
    for (const p of members[0]!.props!) {
      const values = members.map((m, i) => literalOf(m, i, p.name))
      if (values.every((v) => v !== undefined) && new Set(values).size === values.length) return p.name
    }
    return undefined
  }

  const define = (c: number): void => {
    const name = constName.get(c)!
    state.set(c, 'busy')
    const body = expr(c)
    state.set(c, 'done')
    const cls = canonical.classes[c]!
    defs.push({
      name,
      ...(cls.names.length > 0 ? { typeName: cls.names[0]! } : {}),
      cyclic: cyclic.has(c),
      body,
    })
  }

  const exprs = new Map<number, string>()
  for (const r of roots) exprs.set(r, ref(r))
  return { defs, exprs, helpers, problems, imports }
}
