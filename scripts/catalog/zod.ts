// Runtime validators generated from the normalized type model: one `src/events.generated.ts`
// per package that declares events (zod 4), registered from there. The validator of an event
// is its declared type, structure and JSDoc refinement tags, and nothing else: nobody writes
// an event schema by hand.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CatalogError } from './errors.js'
import type { EventModel, SourceModel } from './model.js'
import type { Refinements } from './refinements.js'
import { cyclicClasses } from './schema.js'

/** The generated validator module of a package, relative to the package directory. */
export const VALIDATORS_FILE = 'src/events.generated.ts'
/** An optional hand-written module of the package exporting `invariant` (an {@link EventInvariant}). */
export const INVARIANTS_FILE = 'src/invariants.ts'

const IDENT = /^[A-Za-z_$][\w$]*$/

function propKey(name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name)
}

function lowerFirst(s: string): string {
  return s[0]!.toLowerCase() + s.slice(1)
}

interface RenderInput {
  model: SourceModel
  owner: string
  /** The package's directory relative to the root. */
  dir: string
  events: EventModel[]
  /** The session package itself (imports its own modules relatively; also gets the header). */
  isSession: boolean
  hasInvariant: boolean
}

/** Renders one package's `src/events.generated.ts`. */
export function renderValidators(input: RenderInput): string {
  const { model, owner, events, isSession } = input
  const { canonical } = model
  const cyclic = cyclicClasses(canonical)
  const roots = events.map((e) => e.rootClass)
  const header = isSession && model.header ? model.header.classId : undefined
  if (header !== undefined) roots.push(header)

  // Which classes get a named const: named composites (and named refined leaves), cyclic ones.
  const constName = new Map<number, string>()
  const used = new Set<string>()
  const reach = new Set<number>()
  const stack = [...roots]
  while (stack.length > 0) {
    const c = stack.pop()!
    if (reach.has(c)) continue
    reach.add(c)
    for (const k of canonical.children[c]!) stack.push(k)
  }
  for (const c of [...reach].sort((a, b) => a - b)) {
    const cls = canonical.classes[c]!
    const name = cls.names.find((n) => IDENT.test(n))
    const composite =
      cls.kind === 'object' || cls.kind === 'union' || cls.kind === 'tuple' || cls.kind === 'array'
    let id: string | undefined
    if (name && (composite || cls.rep.refine)) id = `${lowerFirst(name)}Schema`
    else if (cyclic.has(c)) id = `t${cls.digest.slice(0, 12)}Schema`
    if (id === undefined) continue
    if (used.has(id)) id = `${id}_${cls.digest.slice(0, 8)}`
    used.add(id)
    constName.set(c, id)
  }

  const decls: string[] = []
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
        const restAt = els.findIndex((e) => e.rest)
        if (restAt >= 0 && restAt !== els.length - 1) {
          // [A, ...B[], C]: no zod tuple form; checked by a helper over the element validators.
          helpers.add('tupleWithRest')
          const before = els.slice(0, restAt).map((_, i) => ref(kids[i]!))
          const after = els.slice(restAt + 1).map((_, i) => ref(kids[restAt + 1 + i]!))
          return `tupleWithRest([${before.join(', ')}], ${ref(kids[restAt]!)}, [${after.join(', ')}])`
        }
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
    const doc = cls.names.length > 0 ? `/** Validator of {@link ${cls.names[0]}} (generated). */\n` : ''
    const annotation = cyclic.has(c) ? ': z.ZodType<unknown>' : ''
    decls.push(`${doc}export const ${name}${annotation} = ${body}\n`)
  }

  const eventLines = events.map((e) => {
    const s = ref(e.rootClass)
    return `  ${JSON.stringify(e.type)}: ${s} as unknown as z.ZodType<SessionEventMap[${JSON.stringify(e.type)}]>,`
  })
  let headerLine = ''
  if (header !== undefined) {
    headerLine = `\n/** Validator of the logical {@link SessionHeader} (generated from its declaration). */\nexport const sessionHeaderValidator = ${ref(header)} as unknown as z.ZodType<SessionHeader>\n`
  }
  if (problems.length > 0) {
    throw new CatalogError(
      problems.map((p) => ({
        code: 'NON_PERSISTABLE_TYPE' as const,
        loc: `${input.dir}/src/events.ts:1`,
        message: `${input.dir}/src/events.ts: ${p}`,
      })),
    )
  }

  const from = isSession ? './registry.js' : '@keel/session'
  const runtimeImports = ['registerEvents', ...[...helpers].sort()]
  const lines: string[] = []
  lines.push(
    '// GENERATED by `pnpm gen-persistence-catalog` from the event declarations of this package — do not',
    '// edit. Each validator is the declared type with the refinements of its JSDoc tags; change the',
    '// declaration and regenerate.',
  )
  if (isSession) {
    lines.push(`import type { SessionEventMap } from './events.js'`)
    lines.push(
      `import { ${runtimeImports.filter((x) => x === 'registerEvents').join(', ')} } from './registry.js'`,
    )
    if (header !== undefined) lines.push(`import type { SessionHeader } from './types.js'`)
    const h = runtimeImports.filter((x) => x !== 'registerEvents')
    if (h.length > 0) lines.push(`import { ${h.join(', ')} } from './validators.js'`)
  } else {
    lines.push(`import { ${runtimeImports.join(', ')}, type SessionEventMap } from '${from}'`)
  }
  if (input.hasInvariant) lines.push(`import { invariant } from './invariants.js'`)
  lines.push(`import { z } from 'zod'`, '')
  const out = [
    ...lines,
    ...decls,
    headerLine,
    `/** The event types ${owner} declares (its plugin's event list). */`,
    `export const ownedEventTypes = [${events.map((e) => JSON.stringify(e.type)).join(', ')}] as const`,
    '',
    `/** The validator of each event ${owner} declares. */`,
    'export const eventValidators = {',
    ...eventLines,
    '}',
    '',
    `registerEvents(${JSON.stringify(owner)}, eventValidators${input.hasInvariant ? ', { invariant }' : ''})`,
    '',
  ]
  return out.join('\n').replace(/\n{3,}/g, '\n\n')
}

/** Every package's generated validator module, path relative to the root → content. */
export function renderAllValidators(
  model: SourceModel,
  packages: ReadonlyArray<{ name: string; dir: string }>,
): Record<string, string> {
  const files: Record<string, string> = {}
  const byOwner = new Map<string, EventModel[]>()
  for (const e of [...model.events, ...model.fixtureEvents])
    byOwner.set(e.owner, [...(byOwner.get(e.owner) ?? []), e])
  for (const [owner, events] of byOwner) {
    const pkg = packages.find((p) => p.name === owner)
    if (!pkg) continue
    files[`${pkg.dir}/${VALIDATORS_FILE}`] = renderValidators({
      model,
      owner,
      dir: pkg.dir,
      events,
      isSession: owner === model.sessionModule,
      hasInvariant: existsSync(join(model.root, pkg.dir, INVARIANTS_FILE)),
    })
  }
  return files
}
