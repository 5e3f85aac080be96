// Everything persisted beside the event payloads: the logical header, the envelope, the
// stores' physical types (`FORMAT_TYPES`), the envelope declarations shown at the top of the
// catalog, and `SESSION_FORMAT_VERSION`.
import { ts } from 'ts-morph'
import { moduleExports } from './checker-types.js'
import type { CatalogProblem } from './errors.js'
import type { GraphBuilder } from './graph-builder.js'
import type { SourceLoc, SourceLocator } from './locations.js'
import { declarationText } from './source-text.js'
import type { WorkspacePackage } from './workspace.js'

/**
 * The envelope declarations rendered at the top of the catalog, by module. A name the module
 * does not export is skipped (the JSONL store's physical header exists only with that package).
 */
export const ENVELOPE_DECLARATIONS: ReadonlyArray<{ module: string; names: readonly string[] }> = [
  {
    module: '@keel/session',
    names: [
      'SessionEventType',
      'SurfaceEventType',
      'SurfaceOp',
      'SurfaceFields',
      'NoSurfaceFields',
      'EventEnvelope',
      'SessionEvent',
      'SessionHeader',
    ],
  },
  { module: '@keel/store-jsonl', names: ['PhysicalHeader'] },
  { module: '@keel/store', names: ['BlobStub'] },
]

/**
 * Everything persisted beside the event payloads, fingerprinted and under the format history
 * like the events: the envelope, the logical header and each store's physical records. Add a
 * store's physical type (a blob stub, …) here, in this one list. `entry` names it in the
 * catalog and in change records; a module or name that does not exist is skipped.
 */
export const FORMAT_TYPES: ReadonlyArray<{ entry: string; module: string; name: string }> = [
  { entry: '(header)', module: '@keel/session', name: 'SessionHeader' },
  { entry: '(jsonl-header)', module: '@keel/store-jsonl', name: 'PhysicalHeader' },
]

/** The envelope entry: `EventEnvelope` plus the surface fields, `type` a string, `data` opaque. */
export const ENVELOPE_ENTRY = '(envelope)'

export interface EnvelopeDecl {
  name: string
  module: string
  loc: SourceLoc
  ref: string
  text: string
}

/** A format entry's graph node (mapped to its class by the model). */
export interface FormatNode {
  entry: string
  name: string
  module: string
  node: number
  loc: SourceLoc
  /** The declaration (walked for foreign types). */
  decl: ts.Node
}

/** The logical header (`SessionHeader`), persisted beside the log: fingerprinted too. */
export function headerNode(
  checker: ts.TypeChecker,
  sessionExports: ReadonlyMap<string, ts.Symbol>,
  builder: GraphBuilder,
  at: SourceLocator,
): { node: number; loc: SourceLoc; decl: ts.Node } | undefined {
  const headerSymbol = sessionExports.get('SessionHeader')
  if (headerSymbol?.declarations?.[0]) {
    const loc = at.locOf(headerSymbol.declarations[0])
    return {
      node: builder.nodeFor(checker.getDeclaredTypeOfSymbol(headerSymbol), {
        event: '(header)',
        path: 'header',
        loc,
      }),
      loc: at.refOf(headerSymbol.declarations[0]),
      decl: headerSymbol.declarations[0],
    }
  }
  return undefined
}

/** The envelope and the stores' physical types, walked into the graph. */
export function formatNodes(
  program: ts.Program,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
  sessionExports: ReadonlyMap<string, ts.Symbol>,
  builder: GraphBuilder,
  at: SourceLocator,
): FormatNode[] {
  const checker = program.getTypeChecker()
  const formatNodes: FormatNode[] = []
  const envelopeSymbol = sessionExports.get('EventEnvelope')
  if (envelopeSymbol?.declarations?.[0]) {
    const loc = at.locOf(envelopeSymbol.declarations[0])
    const props = [...checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(envelopeSymbol))]
    const surfaceFields = sessionExports.get('SurfaceFields')
    if (surfaceFields)
      props.push(...checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(surfaceFields)))
    builder.declarations.add(envelopeSymbol.declarations[0])
    const node = builder.envelopeNode(props, { event: ENVELOPE_ENTRY, path: 'event', loc })
    formatNodes.push({
      entry: ENVELOPE_ENTRY,
      name: 'EventEnvelope',
      module: sessionModule,
      node,
      loc: at.refOf(envelopeSymbol.declarations[0]),
      decl: envelopeSymbol.declarations[0],
    })
  }
  for (const f of FORMAT_TYPES) {
    if (f.entry === '(header)') continue
    const pkg = packages.find((p) => p.name === f.module)
    const sf = pkg ? program.getSourceFile(pkg.entry) : undefined
    const mod = sf ? checker.getSymbolAtLocation(sf) : undefined
    const sym = mod ? moduleExports(checker, mod).get(f.name) : undefined
    const decl = sym?.declarations?.[0]
    if (!sym || !decl) continue
    const loc = at.locOf(decl)
    const node = builder.nodeFor(checker.getDeclaredTypeOfSymbol(sym), { event: f.entry, path: f.name, loc })
    formatNodes.push({ entry: f.entry, name: f.name, module: f.module, node, loc: at.refOf(decl), decl })
  }
  return formatNodes
}

/** The envelope declarations (`ENVELOPE_DECLARATIONS`) as written. */
export function envelopeDecls(
  program: ts.Program,
  packages: readonly WorkspacePackage[],
  at: SourceLocator,
): EnvelopeDecl[] {
  const checker = program.getTypeChecker()
  const envelope: EnvelopeDecl[] = []
  for (const group of ENVELOPE_DECLARATIONS) {
    const pkg = packages.find((p) => p.name === group.module)
    const sf = pkg ? program.getSourceFile(pkg.entry) : undefined
    const mod = sf ? checker.getSymbolAtLocation(sf) : undefined
    if (!mod) continue
    const exported = moduleExports(checker, mod)
    for (const name of group.names) {
      const sym = exported.get(name)
      const d = sym?.declarations?.[0]
      if (!d) continue
      const stmt = ts.isVariableDeclaration(d) ? d.parent.parent : d
      envelope.push({
        name,
        module: group.module,
        loc: at.locOf(d),
        ref: at.refOf(d),
        text: declarationText(stmt, stmt.getSourceFile()),
      })
    }
  }
  return envelope
}

/**
 * `SESSION_FORMAT_VERSION` (the migrations are read from the running code, see migrations.ts):
 * a numeric literal type, so that the version the catalog reads is the value the code writes.
 * `export const SESSION_FORMAT_VERSION: number = 2` or a computed value is refused.
 */
export function formatVersionOf(
  checker: ts.TypeChecker,
  sessionExports: ReadonlyMap<string, ts.Symbol>,
  at: SourceLocator,
  sessionModule: string,
): { version: number; problem?: CatalogProblem } {
  const versionSymbol = sessionExports.get('SESSION_FORMAT_VERSION')
  const decl = versionSymbol?.declarations?.[0]
  if (!versionSymbol || !decl) {
    return {
      version: 1,
      problem: {
        code: 'FORMAT_VERSION_NOT_LITERAL',
        loc: `${sessionModule}:1`,
        message: `${sessionModule} exports no SESSION_FORMAT_VERSION; declare \`export const SESSION_FORMAT_VERSION = 1\``,
      },
    }
  }
  const t = checker.getTypeOfSymbol(versionSymbol)
  if (t.flags & ts.TypeFlags.NumberLiteral && Number.isInteger((t as ts.NumberLiteralType).value))
    return { version: (t as ts.NumberLiteralType).value }
  const loc = at.locOf(decl)
  return {
    version: 1,
    problem: {
      code: 'FORMAT_VERSION_NOT_LITERAL',
      loc,
      message: `${loc}: SESSION_FORMAT_VERSION has type ${checker.typeToString(t)}; it must be an integer literal (\`export const SESSION_FORMAT_VERSION = 2\`, no annotation) so that the catalog reads the version the code writes`,
    },
  }
}
