// Checker types → the normalized graph (the rules: docs/guides/persistence-catalog.md,
// "Fingerprints"): brands erased,
// `true | false` folded to `boolean`, `undefined` stripped from optional members,
// intersections of objects merged, readonly and ReadonlyArray ignored, symbol-keyed members
// dropped. Non-persistable types are reported with the event and property path.
import { ts } from 'ts-morph'
import { boolValue, isBrandMarker, isLibType, isSymbolKeyed, templateOf, typeName } from './checker-types.js'
import { type GNode, GraphStore, type WalkContext } from './graph.js'
import type { SourceLoc } from './locations.js'
import { refinementsOf } from './refinements.js'

/** How often one generic may be instantiated inside itself on one path before it counts as growing. */
const MAX_NESTED_INSTANTIATIONS = 24

/** Builds the normalized graph from checker types. One builder per generation run. */
export class GraphBuilder extends GraphStore {
  readonly #byType = new Map<ts.Type, number>()
  protected readonly checker: ts.TypeChecker
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
    super()
    this.#refer = refer
    this.#program = program
    this.checker = program.getTypeChecker()
    this.#locate = locate
  }

  #annotate(node: GNode, type: ts.Type): void {
    const { name, decls } = typeName(this.checker, type)
    for (const d of decls) if (this.#locate(d) !== undefined) this.declarations.add(d)
    const repoLocs = decls.map((d) => this.#refer(d)).filter((l): l is string => l !== undefined)
    if (name && repoLocs.length > 0) node.names.add(name)
    for (const l of repoLocs) node.sources.add(l)
  }

  /** The node of a property's value, `undefined` stripped when the property is optional. */
  #propNode(prop: ts.Symbol, ctx: WalkContext): { optional: boolean; child: number } {
    const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0
    const type = this.checker.getTypeOfSymbol(prop)
    if (!optional) return { optional, child: this.nodeFor(type, ctx) }
    const members = type.flags & ts.TypeFlags.Union ? (type as ts.UnionType).types : [type]
    const kept = members.filter((m) => !(m.flags & ts.TypeFlags.Undefined))
    if (kept.length === 0) {
      // `p?: never` says the property is always absent; `p?: undefined` is not a value type.
      const decl = prop.valueDeclaration
      const declared =
        decl && (ts.isPropertySignature(decl) || ts.isPropertyDeclaration(decl)) && decl.type
          ? this.checker.getTypeFromTypeNode(decl.type)
          : undefined
      if (declared && declared.flags & ts.TypeFlags.Never)
        return { optional, child: this.leaf('never', 'never') }
      return { optional, child: this.problem(ctx, '`undefined` is not a value type') }
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
      const declared = this.checker.getTypeFromTypeNode(decl.type)
      const dm = declared.flags & ts.TypeFlags.Union ? (declared as ts.UnionType).types : [declared]
      if (dm.length === kept.length && dm.every((m) => kept.includes(m))) {
        return { optional, child: this.nodeFor(declared, ctx) }
      }
    }
    return { optional, child: this.#unionOf(kept, ctx, undefined) }
  }

  #unionOf(members: readonly ts.Type[], ctx: WalkContext, named: ts.Type | undefined): number {
    const hasTrue = members.some((m) => m.flags & ts.TypeFlags.BooleanLiteral && boolValue(m) === true)
    const hasFalse = members.some((m) => m.flags & ts.TypeFlags.BooleanLiteral && boolValue(m) === false)
    const fold = hasTrue && hasFalse
    // A checker union may be recursive (JsonValue): register its node before the members.
    const node = named ? this.newNode('union') : undefined
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
    if (fold) push(this.leaf('boolean', 'boolean'))
    for (const m of members) {
      if (fold && m.flags & ts.TypeFlags.BooleanLiteral) continue
      if (m.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) {
        push(this.problem(ctx, '`undefined` is not a value type (make the property optional instead)'))
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
    const found = this.byKey.get(key)
    if (found !== undefined) return found
    const fresh = this.newNode('union', key)
    fresh.members = childIds
    return fresh.id
  }

  /** The node of `type`; memoized per type object, recursion-safe. */
  nodeFor(type: ts.Type, ctx: WalkContext): number {
    const memo = this.#byType.get(type)
    if (memo !== undefined) return memo
    // A generic instantiated inside itself with growing arguments (`Deep<T>` reaching
    // `Deep<[T]>`) is a new type object at every level and would recurse without end.
    const generic = this.#genericOf(type)
    const nested = generic ? (this.#instantiating.get(generic) ?? 0) + 1 : 0
    if (generic && nested > MAX_NESTED_INSTANTIATIONS) {
      const shown = this.checker.typeToString(type)
      return this.problem(
        ctx,
        `the recursive generic type ${generic.name} grows with every level (${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}), so it has no finite shape; let it recurse with the same type arguments`,
      )
    }
    if (generic) this.#instantiating.set(generic, nested)
    try {
      return this.#nodeOf(type, ctx)
    } finally {
      if (generic) this.#instantiating.set(generic, nested - 1)
    }
  }

  /** Instantiations of each generic on the walk's current path. */
  readonly #instantiating = new Map<ts.Symbol, number>()

  /** The generic declaration an instantiation comes from (aliases and interfaces with type arguments). */
  #genericOf(type: ts.Type): ts.Symbol | undefined {
    if (type.aliasSymbol && (type.aliasTypeArguments?.length ?? 0) > 0) return type.aliasSymbol
    if (
      !(type.flags & ts.TypeFlags.Object) ||
      !((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference)
    )
      return undefined
    const ref = type as ts.TypeReference
    const target = ref.target?.symbol
    if (!target || ref.target === type || this.checker.getTypeArguments(ref).length === 0) return undefined
    return target
  }

  #nodeOf(type: ts.Type, ctx: WalkContext): number {
    let id = this.#build(type, ctx)
    const alias = type.aliasSymbol
    const aliasDecl = alias?.declarations?.find(ts.isTypeAliasDeclaration)
    if (alias && aliasDecl && this.#locate(aliasDecl) !== undefined) {
      this.declarations.add(aliasDecl)
      const r = refinementsOf(aliasDecl, (what) =>
        this.problem({ ...ctx, loc: this.#locate(aliasDecl)! }, what),
      )
      if (r) id = this.refineNode(id, r, ctx)
    }
    this.#byType.set(type, id)
    return id
  }

  #build(type: ts.Type, ctx: WalkContext): number {
    const f = type.flags
    const F = ts.TypeFlags
    if (f & F.Any)
      return this.problem(
        ctx,
        '`any` (or an unresolved type, such as one imported from an npm package) has no persisted shape; persisted types must be declared in this repository',
        true,
      )
    if (f & F.Unknown) return this.leaf('unknown', 'unknown')
    if (f & F.Never) return this.leaf('never', 'never')
    if (f & F.Null) return this.leaf('null', 'null')
    if (f & (F.Undefined | F.Void))
      return this.problem(ctx, '`undefined` is not a value type (make the property optional instead)')
    if (f & (F.BigInt | F.BigIntLiteral)) return this.problem(ctx, '`bigint` is not JSON')
    if (f & (F.ESSymbol | F.UniqueESSymbol)) return this.problem(ctx, '`symbol` is not JSON')
    if (f & F.Boolean) return this.leaf('boolean', 'boolean')
    if (f & F.BooleanLiteral) {
      const v = boolValue(type)
      return this.leaf('literal', `lit:b:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.StringLiteral) {
      const v = (type as ts.StringLiteralType).value
      return this.leaf('literal', `lit:s:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.NumberLiteral) {
      const v = (type as ts.NumberLiteralType).value
      // A numeric enum member is persisted as a number whose meaning is the member: the member
      // name is structure (inserting a member first renumbers the others, which is breaking).
      const member = f & F.EnumLiteral ? type.getSymbol()?.name : undefined
      if (member !== undefined)
        return this.leaf('literal', `lit:e:${v}:${member}`, (n) => {
          n.value = v
          n.enumMember = member
        })
      return this.leaf('literal', `lit:n:${v}`, (n) => {
        n.value = v
      })
    }
    if (f & F.String) return this.leaf('string', 'string')
    if (f & F.Number) return this.leaf('number', 'number')
    if (f & (F.TemplateLiteral | F.StringMapping)) {
      // By structure, never by the names of the aliases in its placeholders.
      const t = templateOf(this.checker, type)
      if (t.error) return this.problem(ctx, t.error)
      for (const alias of t.aliases) {
        const decl = alias.declarations?.find(ts.isTypeAliasDeclaration)
        if (decl && this.#locate(decl) !== undefined && refinementsOf(decl, () => {}))
          return this.problem(
            ctx,
            `the refinement tags of ${alias.name} cannot hold inside the template literal ${t.text}; put a @pattern on the property instead`,
          )
      }
      return this.leaf('template', `tpl:${t.text}`, (n) => {
        n.text = t.text
        n.templatePattern = t.pattern
      })
    }
    if (f & F.Union) return this.#unionOf((type as ts.UnionType).types, ctx, type)
    if (f & F.Intersection) return this.#intersection(type as ts.IntersectionType, ctx)
    if (f & F.TypeParameter)
      return this.problem(ctx, `unresolved type parameter ${this.checker.typeToString(type)}`)
    if (f & F.NonPrimitive) return this.problem(ctx, '`object` has no declared shape; declare its properties')
    if (f & F.Object) return this.#object(type as ts.ObjectType, ctx)
    return this.problem(ctx, `unsupported type ${this.checker.typeToString(type)}`)
  }

  #intersection(type: ts.IntersectionType, ctx: WalkContext): number {
    const parts = type.types.filter((t) => !isBrandMarker(this.checker, t))
    const primitives = parts.filter((t) => !(t.flags & ts.TypeFlags.Object))
    if (primitives.length > 0) {
      // `string & {}` and brands: the primitive is what is persisted.
      const objectsWithShape = parts.filter(
        (t) =>
          t.flags & ts.TypeFlags.Object && this.checker.getPropertiesOfType(t).some((p) => !isSymbolKeyed(p)),
      )
      if (primitives.length === 1 && objectsWithShape.length === 0) return this.nodeFor(primitives[0]!, ctx)
      return this.problem(ctx, `unsupported intersection ${this.checker.typeToString(type)}`)
    }
    if (parts.length === 1) return this.nodeFor(parts[0]!, ctx)
    return this.#objectFromProps(type, ctx)
  }

  #object(type: ts.ObjectType, ctx: WalkContext): number {
    const checker = this.checker
    if (
      checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0 ||
      checker.getSignaturesOfType(type, ts.SignatureKind.Construct).length > 0
    ) {
      return this.problem(ctx, `a function type (${checker.typeToString(type)}) is not JSON`)
    }
    if (checker.isArrayType(type)) {
      const node = this.newNode('array')
      this.#byType.set(type, node.id)
      const [elem] = checker.getTypeArguments(type as ts.TypeReference)
      node.element = this.nodeFor(elem!, { ...ctx, path: `${ctx.path}[]` })
      return node.id
    }
    if (checker.isTupleType(type)) {
      const node = this.newNode('tuple')
      this.#byType.set(type, node.id)
      const target = (type as ts.TypeReference).target as ts.TupleType
      const args = checker.getTypeArguments(type as ts.TypeReference)
      const restAt = target.elementFlags.findIndex(
        (fl) => fl & (ts.ElementFlags.Rest | ts.ElementFlags.Variadic),
      )
      if (restAt >= 0 && restAt < target.elementFlags.length - 1)
        return this.problem(
          ctx,
          `the tuple ${checker.typeToString(type)} has a rest element before fixed ones, which JSON Schema cannot say; put the rest element last or use an object`,
        )
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
    if (isLibType(this.#program, type)) {
      return this.problem(
        ctx,
        `${checker.typeToString(type)} is not JSON (it does not survive JSON.stringify/parse)`,
      )
    }
    if (sym && sym.flags & ts.SymbolFlags.Class) {
      return this.problem(ctx, `class instance ${sym.name} is not JSON; declare a plain object type`)
    }
    return this.#objectFromProps(type, ctx)
  }

  /**
   * The envelope as persisted: the given property symbols (those of `EventEnvelope` and of
   * `SurfaceFields`) with `type` as a string and `data` opaque (each payload has its own entry).
   */
  envelopeNode(props: readonly ts.Symbol[], ctx: WalkContext): number {
    const node = this.newNode('object')
    const byName = new Map<string, ts.Symbol>()
    for (const p of props) if (!isSymbolKeyed(p) && !byName.has(p.name)) byName.set(p.name, p)
    node.props = [...byName.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((p) => {
        const sub: WalkContext = { ...ctx, path: `${ctx.path}.${p.name}` }
        if (p.name === 'type') return { name: p.name, optional: false, child: this.leaf('string', 'string') }
        if (p.name === 'data')
          return { name: p.name, optional: false, child: this.leaf('unknown', 'unknown') }
        const { optional, child } = this.#propNode(p, sub)
        const decl = p.valueDeclaration ?? p.declarations?.[0]
        if (decl) this.declarations.add(decl)
        const refine = decl ? refinementsOf(decl, (what) => this.problem(sub, what)) : undefined
        return { name: p.name, optional, child: refine ? this.refineNode(child, refine, sub) : child }
      })
    return node.id
  }

  #objectFromProps(type: ts.Type, ctx: WalkContext): number {
    const checker = this.checker
    const node = this.newNode('object')
    this.#byType.set(type, node.id)
    this.#annotate(node, type)
    const props = checker
      .getPropertiesOfType(type)
      .filter((p) => !isSymbolKeyed(p))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    node.props = props.map((p) => {
      const decl = p.valueDeclaration ?? p.declarations?.[0]
      const loc = (decl && this.#locate(decl)) ?? ctx.loc
      const sub: WalkContext = { event: ctx.event, path: `${ctx.path}.${p.name}`, loc }
      if (p.flags & ts.SymbolFlags.Method) {
        return { name: p.name, optional: false, child: this.problem(sub, 'a method (function) is not JSON') }
      }
      const { optional, child } = this.#propNode(p, sub)
      const refine =
        decl && this.#locate(decl) !== undefined
          ? refinementsOf(decl, (what) => this.problem(sub, what))
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
        this.problem(
          sub,
          `index key ${checker.typeToString(info.keyType)} is not a string (JSON object keys are strings)`,
        )
      }
    }
    return node.id
  }
}
