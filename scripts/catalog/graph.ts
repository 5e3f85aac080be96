// The normalized type graph: its node types and the node table (interning, refined copies,
// the problems found while building it). `GraphBuilder` (graph-builder.ts) fills it from
// checker types; `canonicalize` (canonical.ts) turns it into classes and digests.
import type { ts } from 'ts-morph'
import type { SourceLoc } from './locations.js'
import { REFINEMENT_TAGS, type Refinements, refineKey } from './refinements.js'

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
  /** A numeric enum member's name (its meaning; the number alone does not say it). */
  enumMember?: string
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

/** The node table of one generation run: nodes, the problems found, the declarations reached. */
export class GraphStore {
  readonly nodes: GNode[] = []
  readonly problems: NormalizeProblem[] = []
  /** Every repository declaration a payload reaches (the compiler's errors inside them are fatal). */
  readonly declarations = new Set<ts.Node>()
  /** Leaf and refined nodes by structural key (each is created once). */
  protected readonly byKey = new Map<string, number>()

  protected newNode(kind: NodeKind, key?: string): GNode {
    const node: GNode = { id: this.nodes.length, kind, names: new Set(), sources: new Set() }
    this.nodes.push(node)
    if (key !== undefined) this.byKey.set(key, node.id)
    return node
  }

  protected leaf(kind: NodeKind, key: string, init?: (n: GNode) => void): number {
    const found = this.byKey.get(key)
    if (found !== undefined) return found
    const node = this.newNode(kind, key)
    init?.(node)
    return node.id
  }

  protected problem(ctx: WalkContext, what: string, anyType = false): number {
    this.problems.push({
      code: 'NON_PERSISTABLE_TYPE',
      message: `${ctx.loc}: event '${ctx.event}' payload at ${ctx.path}: ${what}; only plain JSON can be persisted`,
      loc: ctx.loc,
      event: ctx.event,
      path: ctx.path,
      ...(anyType ? { anyType } : {}),
    })
    return this.leaf('unknown', 'unknown')
  }

  readonly #arrayFixups: Array<[number, number]> = []

  /** A node equal to `child` with refinements added (later tags win). Reports tags that do not fit. */
  refineNode(child: number, refine: Refinements, ctx: WalkContext): number {
    const src = this.nodes[child]!
    for (const key of Object.keys(refine) as Array<keyof Refinements>) {
      if (!REFINEMENT_TAGS[key].kinds.includes(src.kind)) {
        this.problem(
          ctx,
          `@${key} applies to ${REFINEMENT_TAGS[key].kinds.join(' or ')} values, not to ${src.kind === 'union' ? 'a union (tag a member type alias instead)' : `a ${src.kind}`}`,
        )
        return child
      }
    }
    const merged: Refinements = { ...src.refine, ...refine }
    const key = `refined:${child}:${refineKey(merged)}`
    const found = this.byKey.get(key)
    if (found !== undefined) return found
    const node = this.newNode(src.kind, key)
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
}
