// The events: every member of every declaration merged into `SessionEventMap`, checked
// (quoted key, one owner, `owner/verb` name, JSDoc) and its payload walked into the graph.
import { ts } from 'ts-morph'
import type { CatalogProblem } from './errors.js'
import type { GraphBuilder } from './graph-builder.js'
import type { SourceLoc, SourceLocator } from './locations.js'
import { declarationText, docTextOf, exampleOf, hasDocText } from './source-text.js'

/** Event type names: the same rule as `EVENT_TYPE_PATTERN` of `@keel/session` (checked at registration). */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\/[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+$/

export interface EventModel {
  type: string
  namespace: string
  owner: string
  surface: boolean
  loc: SourceLoc
  /** The declaration's name, `path#SessionEventMap['owner/verb']` (what the catalog shows). */
  ref: string
  /** The raw text of the member's `@example` tag: a JSON payload (the golden logs use it). */
  example?: string
  /** The English description: the JSDoc text without its tags (what a translation translates). */
  doc: string
  /** The member as written: JSDoc and type, containing-interface indentation removed. */
  declaration: string
  /** Referenced type names in the declaration and the class each resolves to. */
  refs: Array<{ name: string; classId: number }>
  rootClass: number
}

/** The surface event types: the string literals of `SurfaceEventType`. */
export function surfaceTypesOf(
  checker: ts.TypeChecker,
  sessionExports: ReadonlyMap<string, ts.Symbol>,
): Set<string> {
  const surfaceSymbol = sessionExports.get('SurfaceEventType')
  const surface = new Set<string>()
  if (surfaceSymbol) {
    const t = checker.getDeclaredTypeOfSymbol(surfaceSymbol)
    for (const m of t.flags & ts.TypeFlags.Union ? (t as ts.UnionType).types : [t]) {
      if (m.flags & ts.TypeFlags.StringLiteral) surface.add((m as ts.StringLiteralType).value)
    }
  }
  return surface
}

/**
 * Reads every event of the map, payloads walked by `builder`; `rootClass` and `refs` hold graph
 * node ids until the model maps them to classes. Problems are appended to `problems`.
 */
export function readEvents(
  checker: ts.TypeChecker,
  mapSymbol: ts.Symbol,
  surface: ReadonlySet<string>,
  builder: GraphBuilder,
  at: SourceLocator,
  problems: CatalogProblem[],
): { events: EventModel[]; decls: ts.InterfaceDeclaration[] } {
  const seen = new Map<string, string>()
  const events: EventModel[] = []
  const mapType = checker.getDeclaredTypeOfSymbol(mapSymbol)
  const decls = (mapSymbol.declarations ?? []).filter(ts.isInterfaceDeclaration)
  for (const decl of decls) {
    const sf = decl.getSourceFile()
    for (const member of decl.members) {
      const loc = at.locOf(member.name ?? member)
      if (!ts.isPropertySignature(member) || !member.name || !ts.isStringLiteral(member.name)) {
        const what =
          member.name && ts.isIdentifier(member.name) ? member.name.text : member.getText(sf).slice(0, 40)
        problems.push({
          code: 'EVENT_TYPE_NOT_A_STRING',
          loc,
          message: `${loc}: SessionEventMap member '${what}' must be a property with a quoted event type key ('owner/verb': payload)`,
        })
        continue
      }
      const type = member.name.text
      const earlier = seen.get(type)
      if (earlier) {
        problems.push({
          code: 'DUPLICATE_EVENT_TYPE',
          loc,
          event: type,
          message: `${loc}: event type '${type}' is declared twice (first at ${earlier}); an event type has exactly one owner — rename one of them`,
        })
        continue
      }
      seen.set(type, loc)
      if (!EVENT_TYPE_PATTERN.test(type)) {
        problems.push({
          code: 'EVENT_TYPE_NAME_INVALID',
          loc,
          event: type,
          message: `${loc}: event type '${type}' must be 'owner/verb': lower-case kebab segments separated by '/' (e.g. 'todo/write')`,
        })
      }
      if (!hasDocText(member)) {
        problems.push({
          code: 'EVENT_WITHOUT_JSDOC',
          loc,
          event: type,
          message: `${loc}: event '${type}' has no JSDoc; write a /** … */ comment describing its contract (it is rendered into the catalog)`,
        })
      }
      const owner = at.ownerOf(sf.fileName)?.name ?? '(unknown)'
      const prop = checker.getPropertyOfType(mapType, type)
      const payload = prop ? checker.getTypeOfSymbol(prop) : checker.getTypeAtLocation(member)
      const rootNode = builder.nodeFor(payload, { event: type, path: 'data', loc })
      const refs: Array<{ name: string; node: number }> = []
      const visit = (n: ts.Node) => {
        if (ts.isTypeReferenceNode(n)) {
          const name = ts.isIdentifier(n.typeName) ? n.typeName.text : n.typeName.getText(sf)
          if (!refs.some((r) => r.name === name)) {
            const t = checker.getTypeFromTypeNode(n)
            if (!(t.flags & (ts.TypeFlags.Any | ts.TypeFlags.TypeParameter))) {
              refs.push({ name, node: builder.nodeFor(t, { event: type, path: 'data', loc }) })
            }
          }
        }
        ts.forEachChild(n, visit)
      }
      if (member.type) visit(member.type)
      events.push({
        type,
        namespace: type.includes('/') ? type.slice(0, type.indexOf('/')) : type,
        owner,
        surface: surface.has(type),
        loc,
        ref: at.refOf(member),
        ...exampleOf(member),
        doc: docTextOf(member),
        declaration: declarationText(member, sf),
        refs: refs.map((r) => ({ name: r.name, classId: r.node })),
        rootClass: rootNode,
      })
    }
  }
  return { events, decls }
}
