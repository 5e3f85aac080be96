// Type normalization and fingerprints (DESIGN §4 "Type fingerprints").
//
// 1. `GraphBuilder` walks checker types into a graph of normalized nodes: brands erased,
//    `true | false` folded to `boolean`, `undefined` stripped from optional members,
//    intersections of objects merged, readonly and ReadonlyArray ignored, symbol-keyed
//    members dropped. Non-persistable types are reported with the event and property path.
// 2. `canonicalize` computes structural equivalence classes over the whole graph by
//    partition refinement (bisimulation: two nodes are equivalent when their labels match
//    and their children are pairwise equivalent, unions compared as sets). Because
//    equivalence is computed over the graph and not by type-object identity, a recursive
//    type gets the same class — and the same digest — however it is entered (`a?: JsonValue`,
//    `b: JsonValue` and `c: JsonValue[]` all reach one `JsonValue` class).
// 3. The canonical form of a class is a depth-first serialization of the quotient graph from
//    that class: object members in name order, union members in a canonical order, and a
//    `{ "$ref": i }` back-reference (i = first-visit index) for every composite class seen
//    before. Union members are ordered by a depth-bounded structural hash whose depth is the
//    number of classes reachable from the union — deep enough to tell every pair of distinct
//    reachable classes apart (Moore's bound), and a function of the union's own structure
//    only, so unrelated types never move it. Digest = SHA-256 of
//    fast-json-stable-stringify(canonical form).
import { createHash } from 'node:crypto'
import stableStringify from 'fast-json-stable-stringify'
import { ts } from 'ts-morph'
import { REFINEMENT_TAGS, type Refinements, refineKey, refinementsOf } from './refinements.js'

export { REFINEMENT_TAGS, type Refinements, refinementsOf } from './refinements.js'

/** A source location `path:line`, path relative to the repository root. */
export type SourceLoc = string

export type NodeKind =
  | 'string'
  | 'number'
  | 'boolean'
  | 'null'
  | 'unknown'
  | 'never'
  | 'literal'
  | 'template'
  | 'array'
  | 'tuple'
  | 'object'
  | 'union'

export interface GProp {
  name: string
  optional: boolean
  child: number
}

export interface GElement {
  optional: boolean
  rest: boolean
  child: number
}

/** One node of the normalized type graph. */
export interface GNode {
  id: number
  kind: NodeKind
  value?: string | number | boolean
  text?: string
  element?: number
  elements?: GElement[]
  props?: GProp[]
  index?: number
  members?: number[]
  /** Template literal types: the regular expression their strings match. */
  templatePattern?: string
  refine?: Refinements
  names: Set<string>
  sources: Set<SourceLoc>
}

/** A problem found while walking a payload type: the generator reports it and exits 1. */
export interface NormalizeProblem {
  code: 'NON_PERSISTABLE_TYPE'
  message: string
  loc: SourceLoc
  event: string
  path: string
  /** The type was `any` — possibly an import the fast program left unresolved. */
  anyType?: boolean
}

/** Where the walk is, for error messages. */
export interface WalkContext {
  event: string
  path: string
  loc: SourceLoc
}

/** Builds the normalized graph from checker types. One builder per generation run. */
export class GraphBuilder {
  readonly nodes: GNode[] = []
  readonly problems: NormalizeProblem[] = []
  readonly #byType = new Map<ts.Type, number>()
  readonly #byKey = new Map<string, number>()
  readonly #checker: ts.TypeChecker
  readonly #program: ts.Program
  readonly #locate: (node: ts.Node) => SourceLoc | undefined
  readonly #refer: (node: ts.Node) => string | undefined

  /**
   * `locate` gives `path:line` (for error messages); `refer` gives the declaration's name
   * (`path#TodoItem`, for the committed catalog: a moved line must not change it).
   */
  constructor(
    program: ts.Program,
    locate: (node: ts.Node) => SourceLoc | undefined,
    refer: (node: ts.Node) => string | undefined = locate,
  ) {
    this.#refer = refer
    this.#program = program
    this.#checker = program.getTypeChecker()
    this.#locate = locate
  }

  #new(kind: NodeKind, key?: string): GNode {
    const node: GNode = { id: this.nodes.length, kind, names: new Set(), sources: new Set() }
    this.nodes.push(node)
    if (key !== undefined) this.#byKey.set(key, node.id)
    return node
  }

  #leaf(kind: NodeKind, key: string, init?: (n: GNode) => void): number {
    const found = this.#byKey.get(key)
    if (found !== undefined) return found
    const node = this.#new(kind, key)
    init?.(node)
    return node.id
  }

  #problem(ctx: WalkContext, what: string, anyType = false): number {
    this.problems.push({
      code: 'NON_PERSISTABLE_TYPE',
      message: `${ctx.loc}: event '${ctx.event}' payload at ${ctx.path}: ${what}; only plain JSON can be persisted`,
      loc: ctx.loc,
      event: ctx.event,
      path: ctx.path,
      ...(anyType ? { anyType } : {}),
    })
    return this.#leaf('unknown', 'unknown')
  }

  #name(type: ts.Type): { name?: string; decls: ts.Declaration[] } {
    const alias = type.aliasSymbol
    if (alias) {
      const args = type.aliasTypeArguments
      const name =
        args && args.length > 0
          ? `${alias.name}<${args.map((a) => this.#checker.typeToString(a)).join(', ')}>`
          : alias.name
      return { name, decls: alias.declarations ?? [] }
    }
    const sym = type.getSymbol()
    if (sym && sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) {
      return { name: this.#checker.typeToString(type), decls: sym.declarations ?? [] }
    }
    return { decls: [] }
  }

  /** Every repository declaration a payload reaches (the compiler's errors inside them are fatal). */
  readonly declarations = new Set<ts.Node>()

  #annotate(node: GNode, type: ts.Type): void {
    const { name, decls } = this.#name(type)
    for (const d of decls) if (this.#locate(d) !== undefined) this.declarations.add(d)
    const repoLocs = decls.map((d) => this.#refer(d)).filter((l): l is string => l !== undefined)
    if (name && repoLocs.length > 0) node.names.add(name)
    for (const l of repoLocs) node.sources.add(l)
  }

  /** A named built-in object type (Date, Map, Set, Promise, …); lib mapped types (Pick, Omit, Record) are fine. */
  #isLib(type: ts.Type): boolean {
    const sym = type.getSymbol()
    if (!sym || !(sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class))) return false
    const decls = sym.declarations ?? []
    return decls.length > 0 && decls.every((d) => this.#program.isSourceFileDefaultLibrary(d.getSourceFile()))
  }

  #isBrandMarker(type: ts.Type): boolean {
    if (!(type.flags & ts.TypeFlags.Object)) return false
    const props = this.#checker.getPropertiesOfType(type)
    if (this.#checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0) return false
    if (this.#checker.getIndexInfosOfType(type).length > 0) return false
    return props.every((p) => p.name.startsWith('__@'))
  }

  /** The node of a property's value, `undefined` stripped when the property is optional. */
  #propNode(prop: ts.Symbol, ctx: WalkContext): { optional: boolean; child: number } {
    const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0
    const type = this.#checker.getTypeOfSymbol(prop)
    if (!optional) return { optional, child: this.nodeFor(type, ctx) }
    const members = type.flags & ts.TypeFlags.Union ? (type as ts.UnionType).types : [type]
    const kept = members.filter((m) => !(m.flags & ts.TypeFlags.Undefined))
    if (kept.length === 0) {
      // `p?: never` says the property is always absent; `p?: undefined` is not a value type.
      const decl = prop.valueDeclaration
      const declared =
        decl && (ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) && decl.type
          ? this.#checker.getTypeFromTypeNode(decl.type)
          : undefined
      if (declared && declared.flags & ts.TypeFlags.Never)
        return { optional, child: this.#leaf('never', 'never') }
      return { optional, child: this.#problem(ctx, '`undefined` is not a value type') }
    }
    if (kept.length === 1) return { optional, child: this.nodeFor(kept[0]!, ctx) }
    // Prefer the declared type object (it carries the alias name) when it is the same union.
    const decl = prop.valueDeclaration
    if (
      decl &&
      !(prop.flags & ts.SymbolFlags.Transient) &&
      (ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) &&
      decl.type
    ) {
      const declared = this.#checker.getTypeFromTypeNode(decl.type)
      const dm = declared.flags & ts.TypeFlags.Union ? (declared as ts.UnionType).types : [declared]
      if (dm.length === kept.length && dm.every((m) => kept.includes(m))) {
        return { optional, child: this.nodeFor(declared, ctx) }
      }
    }
    return { optional, child: this.#unionOf(kept, ctx, undefined) }
  }

  #unionOf(members: readonly ts.Type[], ctx: WalkContext, named: ts.Type | undefined): number {
    const hasTrue = members.some((m) => m.flags & ts.TypeFlags.BooleanLiteral && this.#boolValue(m) === true)
    const hasFalse = members.some(
      (m) => m.flags & ts.TypeFlags.BooleanLiteral && this.#boolValue(m) === false,
    )
    const fold = hasTrue && hasFalse
    // A checker union may be recursive (JsonValue): register its node before the members.
    const node = named ? this.#new('union') : undefined
    if (node && named) {
      this.#byType.set(named, node.id)
      this.#annotate(node, named)
    }
    const childIds: number[] = []
    const push = (id: number) => {
      const n = this.nodes[id]!
      const inner = n.kind === 'union' && n.members && n !== node ? n.members : [id]
      for (const m of inner) if (!childIds.includes(m)) childIds.push(m)
    }
    if (fold) push(this.#leaf('boolean', 'boolean'))
    for (const m of members) {
      if (fold && m.flags & ts.TypeFlags.BooleanLiteral) continue
      if (m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) {
        push(this.#problem(ctx, '`undefined` is not a value type (make the property optional instead)'))
        continue
      }
      push(this.nodeFor(m, ctx))
    }
    if (node) {
      node.members = childIds
      return node.id
    }
    if (childIds.length === 1) return childIds[0]!
    const key = `union:${[...childIds].sort((a, b) => a - b).join(',')}`
    const found = this.#byKey.get(key)
    if (found !== undefined) return found
    const fresh = this.#new('union', key)
    fresh.members = childIds
    return fresh.id
  }

  #boolValue(type: ts.Type): boolean {
    return (type as { intrinsicName?: string }).intrinsicName === 'true'
  }

  /** The node of `type`; memoized per type object, recursion-safe. */
  nodeFor(type: ts.Type, ctx: WalkContext): number {
    const memo = this.#byType.get(type)
    if (memo !== undefined) return memo
    let id = this.#build(type, ctx)
    const alias = type.aliasSymbol
    const aliasDecl = alias?.declarations?.find(ts.isTypeAliasDeclaration)
    if (alias && aliasDecl && this.#locate(aliasDecl) !== undefined) {
      this.declarations.add(aliasDecl)
      const r = refinementsOf(aliasDecl, (what) =>
        this.#problem({ ...ctx, loc: this.#locate(aliasDecl)! }, what),
      )
      if (r) id = this.refineNode(id, r, ctx)
    }
    this.#byType.set(type, id)
    return id
  }

  readonly #arrayFixups: Array<[number, number]> = []

  /** A node equal to `child` with refinements added (later tags win). Reports tags that do not fit. */
  refineNode(child: number, refine: Refinements, ctx: WalkContext): number {
    const src = this.nodes[child]!
    for (const key of Object.keys(refine) as Array<keyof Refinements>) {
      if (!REFINEMENT_TAGS[key].kinds.includes(src.kind)) {
        this.#problem(
          ctx,
          `@${key} applies to ${REFINEMENT_TAGS[key].kinds.join(' or ')} values, not to ${src.kind === 'union' ? 'a union (tag a member type alias instead)' : `a ${src.kind}`}`,
        )
        return child
      }
    }
    const merged: Refinements = { ...src.refine, ...refine }
    const key = `refined:${child}:${refineKey(merged)}`
    const found = this.#byKey.get(key)
    if (found !== undefined) return found
    const node = this.#new(src.kind, key)
    if (src.value !== undefined) node.value = src.value
    if (src.text !== undefined) node.text = src.text
    if (src.templatePattern !== undefined) node.templatePattern = src.templatePattern
    if (src.kind === 'array') {
      if (src.element !== undefined) node.element = src.element
      else this.#arrayFixups.push([node.id, child])
    }
    for (const n of src.names) node.names.add(n)
    for (const l of src.sources) node.sources.add(l)
    node.refine = merged
    return node.id
  }

  /** Completes refined copies of arrays that were still being built (recursive types). */
  finish(): void {
    for (const [id, src] of this.#arrayFixups) this.nodes[id]!.element = this.nodes[src]!.element
  }

  #build(type: ts.Type, ctx: WalkContext): number {
    const f = type.flags
    const F = ts.TypeFlags
    if (f & F.Any)
      return this.#problem(
        ctx,
        '`any` (or an unresolved type, such as one imported from an npm package) has no persisted shape; persisted types must be declared in this repository',
        true,
      )
    if (f & F.Unknown) return this.#leaf('unknown', 'unknown')
    if (f & F.Never) return this.#leaf('never', 'never')
    if (f & F.Null) return this.#leaf('null', 'null')
    if (f & (F.Undefined | F.Void))
      return this.#problem(ctx, '`undefined` is not a value type (make the property optional instead)')
    if (f & (F.BigInt | F.BigIntLiteral)) return this.#problem(ctx, '`bigint` is not JSON')
    if (f & (F.ESSymbol | F.UniqueESSymbol)) return this.#problem(ctx, '`symbol` is not JSON')
    if (f & F.Boolean) return this.#leaf('boolean', 'boolean')
    if (f & F.BooleanLiteral) {
      const v = this.#boolValue(type)
      return this.#leaf('literal', `lit:b:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.StringLiteral) {
      const v = (type as ts.StringLiteralType).value
      return this.#leaf('literal', `lit:s:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.NumberLiteral) {
      const v = (type as ts.NumberLiteralType).value
      return this.#leaf('literal', `lit:n:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.String) return this.#leaf('string', 'string')
    if (f & F.Number) return this.#leaf('number', 'number')
    if (f & (F.TemplateLiteral | F.StringMapping)) {
      const text = this.#checker.typeToString(type)
      return this.#leaf('template', `tpl:${text}`, (n) => {
        n.text = text
        n.templatePattern = this.#templatePattern(type)
      })
    }
    if (f & F.Union) return this.#unionOf((type as ts.UnionType).types, ctx, type)
    if (f & F.Intersection) return this.#intersection(type as ts.IntersectionType, ctx)
    if (f & F.TypeParameter)
      return this.#problem(ctx, `unresolved type parameter ${this.#checker.typeToString(type)}`)
    if (f & F.NonPrimitive)
      return this.#problem(ctx, '`object` has no declared shape; declare its properties')
    if (f & F.Object) return this.#object(type as ts.ObjectType, ctx)
    return this.#problem(ctx, `unsupported type ${this.#checker.typeToString(type)}`)
  }

  /** The regular expression (anchored) that the strings of a template literal type match. */
  #templatePattern(type: ts.Type): string {
    const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
    const part = (t: ts.Type): string => {
      if (t.flags & ts.TypeFlags.StringLiteral) return esc((t as ts.StringLiteralType).value)
      if (t.flags & ts.TypeFlags.NumberLiteral) return esc(String((t as ts.NumberLiteralType).value))
      if (t.flags & ts.TypeFlags.Number) return '-?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?'
      if (t.flags & ts.TypeFlags.BooleanLiteral) return this.#boolValue(t) ? 'true' : 'false'
      if (t.flags & ts.TypeFlags.Boolean) return '(?:true|false)'
      if (t.flags & ts.TypeFlags.Union) return `(?:${(t as ts.UnionType).types.map(part).join('|')})`
      if (t.flags & ts.TypeFlags.TemplateLiteral) return inner(t as ts.TemplateLiteralType)
      return '[\\s\\S]*'
    }
    const inner = (t: ts.TemplateLiteralType): string => {
      let out = esc(t.texts[0] ?? '')
      t.types.forEach((m, i) => {
        out += part(m) + esc(t.texts[i + 1] ?? '')
      })
      return out
    }
    if (type.flags & ts.TypeFlags.TemplateLiteral) return `^${inner(type as ts.TemplateLiteralType)}$`
    return '^[\\s\\S]*$'
  }

  #intersection(type: ts.IntersectionType, ctx: WalkContext): number {
    const parts = type.types.filter((t) => !this.#isBrandMarker(t))
    const primitives = parts.filter((t) => !(t.flags & ts.TypeFlags.Object))
    if (primitives.length > 0) {
      // `string & {}` and brands: the primitive is what is persisted.
      const objectsWithShape = parts.filter(
        (t) =>
          t.flags & ts.TypeFlags.Object &&
          this.#checker.getPropertiesOfType(t).some((p) => !p.name.startsWith('__@')),
      )
      if (primitives.length === 1 && objectsWithShape.length === 0) return this.nodeFor(primitives[0]!, ctx)
      return this.#problem(ctx, `unsupported intersection ${this.#checker.typeToString(type)}`)
    }
    if (parts.length === 1) return this.nodeFor(parts[0]!, ctx)
    return this.#objectFromProps(type, ctx)
  }

  #object(type: ts.ObjectType, ctx: WalkContext): number {
    const checker = this.#checker
    if (
      checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0 ||
      checker.getSignaturesOfType(type, ts.SignatureKind.Construct).length > 0
    ) {
      return this.#problem(ctx, `a function type (${checker.typeToString(type)}) is not JSON`)
    }
    if (checker.isArrayType(type)) {
      const node = this.#new('array')
      this.#byType.set(type, node.id)
      const [elem] = checker.getTypeArguments(type as ts.TypeReference)
      node.element = this.nodeFor(elem!, { ...ctx, path: `${ctx.path}[]` })
      return node.id
    }
    if (checker.isTupleType(type)) {
      const node = this.#new('tuple')
      this.#byType.set(type, node.id)
      const target = (type as ts.TypeReference).target as ts.TupleType
      const args = checker.getTypeArguments(type as ts.TypeReference)
      node.elements = target.elementFlags.map((flag, i) => {
        const optional = (flag & ts.ElementFlags.Optional) !== 0
        const rest = (flag & (ts.ElementFlags.Rest | ts.ElementFlags.Variadic)) !== 0
        const t = args[i]!
        const sub = { ...ctx, path: `${ctx.path}[${i}]` }
        if (optional && t.flags & ts.TypeFlags.Union) {
          const kept = (t as ts.UnionType).types.filter((m) => !(m.flags & ts.TypeFlags.Undefined))
          if (kept.length === 1) return { optional, rest, child: this.nodeFor(kept[0]!, sub) }
          if (kept.length < (t as ts.UnionType).types.length)
            return { optional, rest, child: this.#unionOf(kept, sub, undefined) }
        }
        return { optional, rest, child: this.nodeFor(t, sub) }
      })
      return node.id
    }
    const sym = type.getSymbol()
    if (this.#isLib(type)) {
      return this.#problem(
        ctx,
        `${checker.typeToString(type)} is not JSON (it does not survive JSON.stringify/parse)`,
      )
    }
    if (sym && sym.flags & ts.SymbolFlags.Class) {
      return this.#problem(ctx, `class instance ${sym.name} is not JSON; declare a plain object type`)
    }
    return this.#objectFromProps(type, ctx)
  }

  /**
   * The envelope as persisted: the given property symbols (those of `EventEnvelope` and of
   * `SurfaceFields`) with `type` as a string and `data` opaque (each payload has its own entry).
   */
  envelopeNode(props: readonly ts.Symbol[], ctx: WalkContext): number {
    const node = this.#new('object')
    const byName = new Map<string, ts.Symbol>()
    for (const p of props) if (!p.name.startsWith('__@') && !byName.has(p.name)) byName.set(p.name, p)
    node.props = [...byName.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((p) => {
        const sub: WalkContext = { ...ctx, path: `${ctx.path}.${p.name}` }
        if (p.name === 'type') return { name: p.name, optional: false, child: this.#leaf('string', 'string') }
        if (p.name === 'data')
          return { name: p.name, optional: false, child: this.#leaf('unknown', 'unknown') }
        const { optional, child } = this.#propNode(p, sub)
        const decl = p.valueDeclaration ?? p.declarations?.[0]
        if (decl) this.declarations.add(decl)
        const refine = decl ? refinementsOf(decl, (what) => this.#problem(sub, what)) : undefined
        return { name: p.name, optional, child: refine ? this.refineNode(child, refine, sub) : child }
      })
    return node.id
  }

  #objectFromProps(type: ts.Type, ctx: WalkContext): number {
    const checker = this.#checker
    const node = this.#new('object')
    this.#byType.set(type, node.id)
    this.#annotate(node, type)
    const props = checker
      .getPropertiesOfType(type)
      .filter((p) => !p.name.startsWith('__@'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    node.props = props.map((p) => {
      const decl = p.valueDeclaration ?? p.declarations?.[0]
      const loc = (decl && this.#locate(decl)) ?? ctx.loc
      const sub: WalkContext = { event: ctx.event, path: `${ctx.path}.${p.name}`, loc }
      if (p.flags & ts.SymbolFlags.Method) {
        return { name: p.name, optional: false, child: this.#problem(sub, 'a method (function) is not JSON') }
      }
      const { optional, child } = this.#propNode(p, sub)
      const refine =
        decl && this.#locate(decl) !== undefined
          ? refinementsOf(decl, (what) => this.#problem(sub, what))
          : undefined
      return { name: p.name, optional, child: refine ? this.refineNode(child, refine, sub) : child }
    })
    for (const info of checker.getIndexInfosOfType(type)) {
      const sub = { ...ctx, path: `${ctx.path}[key]` }
      if (info.keyType.flags & ts.TypeFlags.String) {
        let value = info.type
        if (value.flags & ts.TypeFlags.Union) {
          const kept = (value as ts.UnionType).types.filter((m) => !(m.flags & ts.TypeFlags.Undefined))
          if (kept.length === 1) value = kept[0]!
        }
        node.index = this.nodeFor(value, sub)
      } else {
        this.#problem(
          sub,
          `index key ${checker.typeToString(info.keyType)} is not a string (JSON object keys are strings)`,
        )
      }
    }
    return node.id
  }
}

// ---------------------------------------------------------------------------------------------
// Canonical forms and digests

/** One structural equivalence class of the graph. */
export interface TypeClass {
  id: number
  kind: NodeKind
  /** One node of the class (all are structurally equal). */
  rep: GNode
  /** SHA-256 of the canonical form rooted at this class. */
  digest: string
  names: string[]
  sources: SourceLoc[]
}

/** A shallow, digest-referencing form of one class (what the machine catalog stores). */
export type ShallowForm =
  | { k: 'string' | 'number'; r?: Refinements }
  | { k: 'boolean' | 'null' | 'unknown' | 'never' }
  | { k: 'literal'; v: string | number | boolean }
  | { k: 'template'; text: string; r?: Refinements }
  | { k: 'array'; of: string; r?: Refinements }
  | { k: 'tuple'; items: Array<{ t: string; opt?: true; rest?: true }> }
  | { k: 'object'; props: Record<string, { t: string; opt?: true }>; index?: string }
  | { k: 'union'; of: string[] }

export interface Canonical {
  /** Class id of each graph node. */
  classOf: number[]
  classes: TypeClass[]
  /** Children of each class, canonical order (unions already ordered). */
  children: number[][]
  /** Canonical JSON form rooted at a class (self-contained, with back-references). */
  formOf(classId: number): unknown
  shallow(classId: number): ShallowForm
}

function label(n: GNode): string {
  return n.refine ? `${baseLabel(n)}#${refineKey(n.refine)}` : baseLabel(n)
}

function baseLabel(n: GNode): string {
  switch (n.kind) {
    case 'literal':
      return `literal:${typeof n.value}:${JSON.stringify(n.value)}`
    case 'template':
      return `template:${n.text}`
    case 'object':
      return `object:${JSON.stringify(n.props!.map((p) => [p.name, p.optional]))}:${n.index !== undefined}`
    case 'tuple':
      return `tuple:${JSON.stringify(n.elements!.map((e) => [e.optional, e.rest]))}`
    default:
      return n.kind
  }
}

function childList(n: GNode): number[] {
  switch (n.kind) {
    case 'array':
      return [n.element!]
    case 'tuple':
      return n.elements!.map((e) => e.child)
    case 'object':
      return n.index === undefined ? n.props!.map((p) => p.child) : [...n.props!.map((p) => p.child), n.index]
    case 'union':
      return n.members!
    default:
      return []
  }
}

const sha1 = (s: string) => createHash('sha1').update(s).digest('base64')
export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')

/** Structural equivalence by partition refinement, then canonical forms and digests. */
export function canonicalize(allNodes: readonly GNode[]): Canonical {
  // A union whose members collapsed to one (`Brand<string, 'A'> | string`, or two structurally
  // identical members `{ a: string } | { a: string }`) is that member.
  const collapsed = new Map<number, number>()
  const redirect = (id: number): number => {
    let n = allNodes[id]!
    for (let guard = 0; guard < 64; guard++) {
      const next = n.kind === 'union' && n.members!.length === 1 ? n.members![0]! : collapsed.get(n.id)
      if (next === undefined || next === n.id) break
      n = allNodes[next]!
    }
    return n.id
  }
  const kidsOf = (n: GNode) => childList(n).map(redirect)
  let nodes = allNodes.filter((n) => redirect(n.id) === n.id)
  // Partition refinement (Moore): start from labels, split by children's classes until stable.
  let cls = new Array<number>(allNodes.length)
  for (;;) {
    cls = new Array<number>(allNodes.length)
    const intern = new Map<string, number>()
    for (const n of nodes) {
      const l = label(n)
      let c = intern.get(l)
      if (c === undefined) {
        c = intern.size
        intern.set(l, c)
      }
      cls[n.id] = c
    }
    let count = intern.size
    for (;;) {
      const next = new Map<string, number>()
      const nc = new Array<number>(allNodes.length)
      for (const n of nodes) {
        const kids = kidsOf(n).map((k) => cls[k]!)
        const sig =
          n.kind === 'union'
            ? `${cls[n.id]}|${[...new Set(kids)].sort((a, b) => a - b).join(',')}`
            : `${cls[n.id]}|${kids.join(',')}`
        let c = next.get(sig)
        if (c === undefined) {
          c = next.size
          next.set(sig, c)
        }
        nc[n.id] = c
      }
      cls = nc
      if (next.size === count) break
      count = next.size
    }
    // Unions whose members all fell into one class collapse onto a member; then recompute.
    let more = false
    for (const n of nodes) {
      if (n.kind !== 'union') continue
      const kids = kidsOf(n).filter((k) => k !== n.id)
      if (kids.length > 0 && new Set(kids.map((k) => cls[k])).size === 1) {
        collapsed.set(n.id, kids[0]!)
        more = true
      }
    }
    if (!more) break
    nodes = allNodes.filter((n) => redirect(n.id) === n.id)
  }
  for (const n of allNodes) if (redirect(n.id) !== n.id) cls[n.id] = cls[redirect(n.id)]!
  const classCount = Math.max(-1, ...cls) + 1
  const reps: GNode[] = new Array(classCount)
  const names: Array<Set<string>> = Array.from({ length: classCount }, () => new Set())
  const sources: Array<Set<string>> = Array.from({ length: classCount }, () => new Set())
  for (const n of allNodes) {
    const c = cls[n.id]!
    if (!reps[c] && redirect(n.id) === n.id) reps[c] = n
    for (const x of n.names) names[c]!.add(x)
    for (const x of n.sources) sources[c]!.add(x)
  }
  const rawKids: number[][] = reps.map((r) => {
    const kids = kidsOf(r).map((k) => cls[k]!)
    return r.kind === 'union' ? [...new Set(kids)] : kids
  })
  const labels = reps.map(label)

  // Depth-bounded structural keys, memoized per (depth, class): key_0 hashes the label,
  // key_d hashes the label and the children's key_(d-1) (unions as sorted sets). Computed with
  // an explicit stack: the depth can exceed what recursion allows on a deep type graph.
  const keyRows: string[][] = []
  const rowOf = (d: number) => {
    while (keyRows.length <= d) keyRows.push([])
    return keyRows[d]!
  }
  const keyAt = (d: number, c: number): string => {
    const stack: Array<[number, number]> = [[d, c]]
    while (stack.length > 0) {
      const [dd, cc] = stack[stack.length - 1]!
      const row = rowOf(dd)
      if (row[cc] !== undefined) {
        stack.pop()
        continue
      }
      if (dd === 0) {
        row[cc] = sha1(labels[cc]!)
        stack.pop()
        continue
      }
      const prev = rowOf(dd - 1)
      const missing = rawKids[cc]!.filter((x) => prev[x] === undefined)
      if (missing.length > 0) {
        for (const x of missing) stack.push([dd - 1, x])
        continue
      }
      const kids = rawKids[cc]!.map((x) => prev[x]!)
      row[cc] = sha1(
        `${labels[cc]}|${reps[cc]!.kind === 'union' ? [...new Set(kids)].sort().join(',') : kids.join(',')}`,
      )
      stack.pop()
    }
    return rowOf(d)[c]!
  }
  const reachCount = (c: number): number => {
    const seen = new Set<number>([c])
    const stack = [c]
    while (stack.length > 0) {
      for (const k of rawKids[stack.pop()!]!) {
        if (!seen.has(k)) {
          seen.add(k)
          stack.push(k)
        }
      }
    }
    return seen.size
  }
  // Union members are ordered by key_d at the smallest d where the members' keys are pairwise
  // distinct. That d is a function of the members' structure alone (unrelated types never move
  // it), and it exists: distinct classes among the n classes reachable from the union differ
  // at some depth below n (Moore's bound). In practice d is 0–2.
  const children: number[][] = rawKids.map((kids, c) => {
    if (reps[c]!.kind !== 'union') return kids
    const bound = kids.length > 1 ? reachCount(c) : 0
    for (let d = 0; ; d++) {
      const keys = new Map(kids.map((k) => [k, keyAt(d, k)]))
      if (new Set(keys.values()).size === kids.length || d >= bound) {
        return [...kids].sort((a, b) => {
          const ka = keys.get(a)!
          const kb = keys.get(b)!
          return ka < kb ? -1 : ka > kb ? 1 : a - b
        })
      }
    }
  })

  const formOf = (root: number): unknown => {
    const index = new Map<number, number>()
    const visit = (c: number): unknown => {
      const r = reps[c]!
      switch (r.kind) {
        case 'literal':
          return { k: 'literal', v: r.value }
        case 'template':
          return { k: 'template', text: r.text, ...(r.refine ? { r: r.refine } : {}) }
        case 'string':
        case 'number':
          return { k: r.kind, ...(r.refine ? { r: r.refine } : {}) }
        case 'boolean':
        case 'null':
        case 'unknown':
        case 'never':
          return { k: r.kind }
      }
      const seen = index.get(c)
      if (seen !== undefined) return { $ref: seen }
      index.set(c, index.size)
      const kids = children[c]!
      switch (r.kind) {
        case 'array':
          return { k: 'array', of: visit(kids[0]!), ...(r.refine ? { r: r.refine } : {}) }
        case 'tuple':
          return {
            k: 'tuple',
            items: r.elements!.map((e, i) => ({
              t: visit(kids[i]!),
              ...(e.optional ? { opt: true } : {}),
              ...(e.rest ? { rest: true } : {}),
            })),
          }
        case 'object': {
          const props: Record<string, unknown> = {}
          r.props!.forEach((p, i) => {
            props[p.name] = { t: visit(kids[i]!), ...(p.optional ? { opt: true } : {}) }
          })
          const out: Record<string, unknown> = { k: 'object', props }
          if (r.index !== undefined) out.index = visit(kids[r.props!.length]!)
          return out
        }
        case 'union':
          return { k: 'union', of: kids.map(visit) }
      }
      throw new Error(`unreachable kind ${r.kind}`)
    }
    return visit(root)
  }

  const digests = reps.map((_, c) => sha256(stableStringify(formOf(c))))
  const classes: TypeClass[] = reps.map((rep, c) => ({
    id: c,
    kind: rep.kind,
    rep,
    digest: digests[c]!,
    names: [...names[c]!].sort(),
    sources: [...sources[c]!].sort(),
  }))

  const shallow = (c: number): ShallowForm => {
    const r = reps[c]!
    const kids = children[c]!
    switch (r.kind) {
      case 'literal':
        return { k: 'literal', v: r.value! }
      case 'template':
        return { k: 'template', text: r.text!, ...(r.refine ? { r: r.refine } : {}) }
      case 'array':
        return { k: 'array', of: digests[kids[0]!]!, ...(r.refine ? { r: r.refine } : {}) }
      case 'string':
      case 'number':
        return { k: r.kind, ...(r.refine ? { r: r.refine } : {}) }
      case 'tuple':
        return {
          k: 'tuple',
          items: r.elements!.map((e, i) => ({
            t: digests[kids[i]!]!,
            ...(e.optional ? { opt: true as const } : {}),
            ...(e.rest ? { rest: true as const } : {}),
          })),
        }
      case 'object': {
        const props: Record<string, { t: string; opt?: true }> = {}
        r.props!.forEach((p, i) => {
          props[p.name] = { t: digests[kids[i]!]!, ...(p.optional ? { opt: true as const } : {}) }
        })
        return r.index !== undefined
          ? { k: 'object', props, index: digests[kids[r.props!.length]!]! }
          : { k: 'object', props }
      }
      case 'union':
        return { k: 'union', of: kids.map((k) => digests[k]!) }
      default:
        return { k: r.kind as 'boolean' }
    }
  }

  return { classOf: cls, classes, children, formOf, shallow }
}

/** Orders `path:line` locations by path, then numerically by line. */
export function compareLoc(a: string, b: string): number {
  const ia = a.lastIndexOf(':')
  const ib = b.lastIndexOf(':')
  const pa = a.slice(0, ia)
  const pb = b.slice(0, ib)
  if (pa !== pb) return pa < pb ? -1 : 1
  return Number(a.slice(ia + 1)) - Number(b.slice(ib + 1))
}
