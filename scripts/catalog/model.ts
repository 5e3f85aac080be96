// Builds the catalog's source model from a loaded workspace: finds `SessionEventMap` and every
// merge through the type checker, walks every payload and format type into the normalized
// graph, and maps it to structural classes. Each step lives in its own module; this one
// orders them and assembles the result.
import { relative } from 'node:path'
import { ts } from 'ts-morph'
import { type Canonical, canonicalize, reachableFrom } from './canonical.js'
import { moduleExports } from './checker-types.js'
import { compilerProblems } from './diagnostics.js'
import { CatalogError, type CatalogProblem } from './errors.js'
import { type EventModel, readEvents, surfaceTypesOf } from './event-members.js'
import { foreignTypes } from './foreign.js'
import {
  type EnvelopeDecl,
  envelopeDecls,
  formatNodes,
  formatVersionOf,
  headerNode,
} from './format-entries.js'
import { GraphBuilder } from './graph-builder.js'
import { compareLoc, type SourceLoc, sourceLocator } from './locations.js'
import { hiddenMembers, lostRefinements, mergedMapSymbol, misplacedMerges } from './misplaced.js'
import { declarationText, docTextOf } from './source-text.js'
import { type LoadedProject, posix } from './workspace.js'

export type { EventModel } from './event-members.js'
export type { EnvelopeDecl } from './format-entries.js'

export interface SourceModel {
  root: string
  sessionModule: string
  formatVersion: number
  events: EventModel[]
  /** Events of test fixture packages: validators only, not part of the catalog. */
  fixtureEvents: EventModel[]
  envelope: EnvelopeDecl[]
  header?: { classId: number; loc: SourceLoc }
  /** The envelope, the header and the stores' physical types, by catalog entry. */
  format: Array<{ entry: string; name: string; module: string; classId: number; loc: SourceLoc }>
  /** The surface event types (`SurfaceEventType`), sorted. */
  surfaceTypes: string[]
  /** Every reached named type's declaration as written (JSDoc kept), by `path#Name`. */
  typeDecls: Record<string, string>
  /** The English description of each reached named type that has one, by `path#Name`. */
  typeDocs: Record<string, string>
  canonical: Canonical
  /** Classes reachable from the events and the header. */
  reachable: number[]
}

/** Loads, discovers and normalizes. Throws {@link CatalogError} listing every problem. */
export function buildModel(loaded: LoadedProject, sessionModule = '@keel/session'): SourceModel {
  const { root, project, packages } = loaded
  const program = project.getProgram().compilerObject
  const checker = program.getTypeChecker()
  const problems: CatalogProblem[] = []
  const at = sourceLocator(root, packages)

  const sessionPkg = packages.find((p) => p.name === sessionModule)
  const sessionSf = sessionPkg ? program.getSourceFile(sessionPkg.entry) : undefined
  const moduleSymbol = sessionSf ? checker.getSymbolAtLocation(sessionSf) : undefined
  if (!sessionPkg || !sessionSf || !moduleSymbol) {
    throw new CatalogError([
      {
        code: 'NO_SESSION_MODULE',
        loc: 'packages/*/*/package.json:1',
        message: `packages/*/*/package.json:1: no package named '${sessionModule}' with a src/index.ts under ${root}/packages; the catalog starts from its SessionEventMap`,
      },
    ])
  }
  const sessionExports = moduleExports(checker, moduleSymbol)
  const exportedMap = sessionExports.get('SessionEventMap')
  if (!exportedMap) {
    throw new CatalogError([
      {
        code: 'NO_SESSION_MODULE',
        loc: `${posix(relative(root, sessionPkg.entry))}:1`,
        message: `${posix(relative(root, sessionPkg.entry))}:1: '${sessionModule}' does not export SessionEventMap`,
      },
    ])
  }

  const mapSymbol = mergedMapSymbol(program, at, exportedMap)
  problems.push(...misplacedMerges(program, at, sessionModule, mapSymbol))
  const surface = surfaceTypesOf(checker, sessionExports)
  const builder = new GraphBuilder(program, at.locate, (node) =>
    at.locate(node) === undefined ? undefined : at.refOf(node),
  )
  const { events, decls } = readEvents(checker, mapSymbol, surface, builder, at, problems)
  problems.push(...hiddenMembers(checker, at, sessionModule, mapSymbol, new Set(events.map((e) => e.type))))
  const header = headerNode(checker, sessionExports, builder, at)
  problems.push(...lostRefinements(program, at))
  const formatEntries = formatNodes(program, packages, sessionModule, sessionExports, builder, at)
  builder.finish()

  for (const p of builder.problems) problems.push({ ...p })
  // Declarations as written, for types from outside the repository (the envelope's `data` is
  // opaque: each payload is walked as its own event).
  const foreign = foreignTypes(program, root, at, [
    ...decls.flatMap((d) =>
      d.members.filter(ts.isPropertySignature).map((m) => ({
        node: m as ts.Node,
        entry: ts.isStringLiteral(m.name) ? m.name.text : m.name.getText(),
      })),
    ),
    ...(header ? [{ node: header.decl, entry: '(header)' }] : []),
    ...formatEntries.filter((f) => f.entry !== '(envelope)').map((f) => ({ node: f.decl, entry: f.entry })),
  ])
  problems.push(...foreign.problems)
  problems.push(
    ...compilerProblems(program, root, at.isRepoSource, [
      ...decls,
      ...builder.declarations,
      ...foreign.declarations,
    ]),
  )
  const envelope = envelopeDecls(program, packages, at)
  const { version: formatVersion, problem: versionProblem } = formatVersionOf(
    checker,
    sessionExports,
    at,
    sessionModule,
  )
  if (versionProblem) problems.push(versionProblem)
  if (problems.length > 0) {
    const unique = new Map<string, CatalogProblem>()
    for (const p of problems) unique.set(p.message, p)
    throw new CatalogError(
      [...unique.values()].sort((a, b) => compareLoc(a.loc, b.loc) || (a.message < b.message ? -1 : 1)),
    )
  }

  const typeDecls: Record<string, string> = {}
  const typeDocs: Record<string, string> = {}
  for (const d of builder.declarations) {
    if (!ts.isInterfaceDeclaration(d) && !ts.isTypeAliasDeclaration(d)) continue
    if (at.locate(d) === undefined || at.ownerOf(d.getSourceFile().fileName)?.fixture) continue
    typeDecls[at.refOf(d)] = declarationText(d, d.getSourceFile())
    const doc = docTextOf(d)
    if (doc !== '') typeDocs[at.refOf(d)] = doc
  }
  const canonical = canonicalize(builder.nodes)
  const cls = (node: number) => canonical.classOf[node]!
  for (const e of events) {
    e.rootClass = cls(e.rootClass)
    e.refs = e.refs
      .map((r) => ({ name: r.name, classId: cls(r.classId) }))
      .sort((a, b) => (a.name < b.name ? -1 : 1))
  }
  events.sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
  const fixtureOwners = new Set(packages.filter((p) => p.fixture).map((p) => p.name))
  const fixtureEvents = events.filter((e) => fixtureOwners.has(e.owner))
  events.splice(0, events.length, ...events.filter((e) => !fixtureOwners.has(e.owner)))
  const roots = events.map((e) => e.rootClass)
  const headerModel = header ? { classId: cls(header.node), loc: header.loc } : undefined
  if (headerModel) roots.push(headerModel.classId)
  const format = formatEntries.map((f) => ({
    entry: f.entry,
    name: f.name,
    module: f.module,
    classId: cls(f.node),
    loc: f.loc,
  }))
  if (headerModel)
    format.push({
      entry: '(header)',
      name: 'SessionHeader',
      module: sessionModule,
      classId: headerModel.classId,
      loc: headerModel.loc,
    })
  format.sort((a, b) => (a.entry < b.entry ? -1 : 1))
  for (const f of format) roots.push(f.classId)
  const reach = reachableFrom(canonical, roots)
  return {
    root,
    sessionModule,
    formatVersion,
    events,
    fixtureEvents,
    envelope,
    header: headerModel,
    format,
    surfaceTypes: [...surface].sort(),
    typeDecls,
    typeDocs,
    canonical,
    reachable: [...reach],
  }
}
