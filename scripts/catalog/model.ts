// Builds the catalog's source model from a repository: loads the packages' sources into one
// ts-morph Project, finds `SessionEventMap` and every merge through the type checker, and
// normalizes every payload type.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { Project, ts } from 'ts-morph'
import { compilerProblems } from './diagnostics.js'
import { CatalogError, type CatalogProblem } from './errors.js'
import {
  type Canonical,
  canonicalize,
  compareLoc,
  GraphBuilder,
  refinementsOf,
  type SourceLoc,
} from './normalize.js'

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

/** Event type names: the same rule as `EVENT_TYPE_PATTERN` of `@keel/session` (checked at registration). */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\/[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+$/

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

/** A workspace package found under `packages/<group>/<name>`. */
export interface WorkspacePackage {
  name: string
  /** Directory relative to the root, `/`-separated. */
  dir: string
  /** Absolute path of `src/index.ts`. */
  entry: string
  /**
   * A test fixture package (`packages/<group>/<name>/tests/fixtures/<f>`): its validators are
   * generated like any package's, but its events are not part of the catalog.
   */
  fixture?: true
}

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

export interface EnvelopeDecl {
  name: string
  module: string
  loc: SourceLoc
  ref: string
  text: string
}

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

export interface LoadOptions {
  /** Repository root (holds `packages/<group>/<name>`). */
  root: string
  /** The module that declares `SessionEventMap`. Default `@keel/session`. */
  sessionModule?: string
}

export interface LoadedProject {
  root: string
  project: Project
  packages: WorkspacePackage[]
}

const posix = (p: string) => p.split(sep).join('/')

/** Finds `packages/<group>/<name>/package.json` under `root`, sorted by directory. */
export function findPackages(root: string): WorkspacePackage[] {
  const out: WorkspacePackage[] = []
  const base = join(root, 'packages')
  if (!existsSync(base)) return out
  for (const group of readdirSync(base, { withFileTypes: true })) {
    if (!group.isDirectory()) continue
    for (const pkg of readdirSync(join(base, group.name), { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue
      const dir = join(base, group.name, pkg.name)
      const manifest = join(dir, 'package.json')
      if (!existsSync(manifest)) continue
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name
      if (!name) continue
      out.push({ name, dir: posix(relative(root, dir)), entry: join(dir, 'src', 'index.ts') })
      const fixtures = join(dir, 'tests', 'fixtures')
      if (!existsSync(fixtures)) continue
      for (const f of readdirSync(fixtures, { withFileTypes: true })) {
        const fdir = join(fixtures, f.name)
        const fmanifest = join(fdir, 'package.json')
        if (!f.isDirectory() || !existsSync(fmanifest) || !existsSync(join(fdir, 'src', 'index.ts'))) continue
        const fname = (JSON.parse(readFileSync(fmanifest, 'utf8')) as { name?: string }).name
        if (fname)
          out.push({
            name: fname,
            dir: posix(relative(root, fdir)),
            entry: join(fdir, 'src', 'index.ts'),
            fixture: true,
          })
      }
    }
  }
  return out.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
}

/** Sources a package may declare events in: `.ts`, `.mts`, `.cts` and their `.d.` forms; no tests. */
const SOURCE_FILE = /\.(?:d\.)?[mc]?ts$/
const TEST_FILE = /\.(test|spec|bench)\.[mc]?ts$/

function listSources(dir: string, out: string[]): void {
  if (!existsSync(dir)) return
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') listSources(p, out)
    } else if (SOURCE_FILE.test(e.name) && !TEST_FILE.test(e.name)) {
      out.push(p)
    }
  }
}

/** A bare module specifier that is not a workspace package (an npm import). */
function isNpmSpecifier(name: string, workspace: ReadonlySet<string>): boolean {
  if (name.startsWith('.') || name.startsWith('/') || name.startsWith('node:'))
    return name.startsWith('node:')
  const pkg = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!
  return !workspace.has(pkg)
}

/**
 * Creates the one Project used for a run: every package's sources (no tests), workspace
 * package names mapped to their `src/index.ts`, relative imports followed. npm imports (zod,
 * openai, node) are never resolved — in every run, so the output never depends on a loading
 * mode: a persisted type must be declared in this repository, and a payload that reaches an
 * npm type is refused (it shows up as `any`). Creating the program dominates the run time, so
 * build it once and reuse it.
 */
export function loadProject(root: string): LoadedProject {
  const packages = findPackages(root)
  const paths: Record<string, string[]> = {}
  for (const p of packages) paths[p.name] = [p.entry]
  const workspace = new Set(packages.map((p) => p.name))
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    types: [],
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: false,
    paths,
  }
  const project = new Project({
    compilerOptions,
    skipAddingFilesFromTsConfig: true,
    resolutionHost: (host, getOptions) => ({
      resolveModuleNames: (names, containingFile) =>
        names.map((name) => {
          if (isNpmSpecifier(name, workspace)) return undefined
          if (workspace.has(name)) {
            const entry = paths[name]![0]!
            return { resolvedFileName: entry, extension: ts.Extension.Ts, isExternalLibraryImport: false }
          }
          return ts.resolveModuleName(name, containingFile, getOptions(), host).resolvedModule
        }),
    }),
  })
  const files: string[] = []
  for (const p of packages) listSources(join(root, p.dir, 'src'), files)
  files.sort()
  for (const f of files) project.addSourceFileAtPath(f)
  return { root, project, packages }
}

function jsDocStart(node: ts.Node, sf: ts.SourceFile): number | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  if (docs.length === 0) return undefined
  return docs[0]!.getStart(sf)
}

function hasDocText(node: ts.Node): boolean {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  return docs.some((d) => {
    const c = d.comment
    const text = typeof c === 'string' ? c : (c ?? []).map((x) => x.text).join('')
    return text.trim().length > 0 || (d.tags?.length ?? 0) > 0
  })
}

/** The JSDoc text of a declaration without its tags. */
export function docTextOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  return docs
    .map((d) => (typeof d.comment === 'string' ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? '')))
    .join('\n')
    .trim()
}

function exampleOf(node: ts.Node): { example?: string } {
  const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === 'example')
  const text = tag ? ts.getTextOfJSDocComment(tag.comment)?.trim() : undefined
  return text ? { example: text } : {}
}

/** The text from the node's JSDoc (or its start) to its end, dedented by its column. */
function declarationText(node: ts.Node, sf: ts.SourceFile): string {
  const start = jsDocStart(node, sf) ?? node.getStart(sf)
  const text = sf.text.slice(start, node.getEnd())
  const col = start - sf.getLineAndCharacterOfPosition(start).character
  const indent = sf.text.slice(col, start)
  if (!/^[ \t]*$/.test(indent) || indent.length === 0) return text
  return text
    .split('\n')
    .map((line, i) => (i > 0 && line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')
}

/** Loads, discovers and normalizes. Throws {@link CatalogError} listing every problem. */
export function buildModel(loaded: LoadedProject, sessionModule = '@keel/session'): SourceModel {
  const { root, project, packages } = loaded
  const program = project.getProgram().compilerObject
  const checker = program.getTypeChecker()
  const problems: CatalogProblem[] = []

  const pkgDirs = packages.map((p) => ({ abs: posix(join(root, p.dir)) + '/', pkg: p }))
  const ownerOf = (fileName: string): WorkspacePackage | undefined => {
    const f = posix(fileName)
    let best: (typeof pkgDirs)[number] | undefined
    for (const d of pkgDirs) if (f.startsWith(d.abs) && (!best || d.abs.length > best.abs.length)) best = d
    return best?.pkg
  }
  const isRepoSource = (sf: ts.SourceFile) => {
    const owner = ownerOf(sf.fileName)
    return owner !== undefined && posix(sf.fileName).startsWith(`${posix(join(root, owner.dir))}/src/`)
  }
  const locate = (node: ts.Node): SourceLoc | undefined => {
    const sf = node.getSourceFile()
    if (!isRepoSource(sf)) return undefined
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1
    return `${posix(relative(root, sf.fileName))}:${line}`
  }
  // The committed catalog names declarations, not lines: `path#SessionEventMap['todo/write']`.
  const refOf = (node: ts.Node): string => {
    const parts: string[] = []
    for (let n: ts.Node | undefined = node; n && !ts.isSourceFile(n); n = n.parent) {
      if (ts.isModuleDeclaration(n) || ts.isModuleBlock(n)) continue
      const name = (n as { name?: ts.Node }).name
      if (name && ts.isIdentifier(name)) parts.unshift(`.${name.text}`)
      else if (name && (ts.isStringLiteral(name) || ts.isNumericLiteral(name)))
        parts.unshift(`['${name.text}']`)
    }
    const path = posix(relative(root, node.getSourceFile().fileName))
    return `${path}#${parts.join('').replace(/^\./, '')}`
  }
  const locOf = (node: ts.Node) => locate(node) ?? `${posix(relative(root, node.getSourceFile().fileName))}:?`

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
  const exportsOf = (mod: ts.Symbol) => {
    const map = new Map<string, ts.Symbol>()
    for (const s of checker.getExportsOfModule(mod)) {
      map.set(s.name, s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)
    }
    return map
  }
  const sessionExports = exportsOf(moduleSymbol)
  const mapSymbol = sessionExports.get('SessionEventMap')
  if (!mapSymbol) {
    throw new CatalogError([
      {
        code: 'NO_SESSION_MODULE',
        loc: `${posix(relative(root, sessionPkg.entry))}:1`,
        message: `${posix(relative(root, sessionPkg.entry))}:1: '${sessionModule}' does not export SessionEventMap`,
      },
    ])
  }

  // Merges into a wrong module: any `declare module 'x'` in a package source that declares an
  // interface named SessionEventMap where 'x' is not the session module.
  for (const sf of program.getSourceFiles()) {
    if (!isRepoSource(sf)) continue
    for (const stmt of sf.statements) {
      if (!ts.isModuleDeclaration(stmt) || !ts.isStringLiteral(stmt.name)) continue
      const body = stmt.body
      if (!body || !ts.isModuleBlock(body)) continue
      for (const inner of body.statements) {
        if (
          ts.isInterfaceDeclaration(inner) &&
          inner.name.text === 'SessionEventMap' &&
          stmt.name.text !== sessionModule
        ) {
          const loc = locOf(stmt)
          problems.push({
            code: 'WRONG_MERGE_MODULE',
            loc,
            message: `${loc}: SessionEventMap is merged into module '${stmt.name.text}'; events must be merged into '${sessionModule}' (write \`declare module '${sessionModule}'\`), otherwise they are not part of the session's event map`,
          })
        }
      }
    }
  }
  // Any other interface named SessionEventMap that is not part of the session's one (`declare
  // global`, a namespace, a script file) would be silently skipped: refuse it instead.
  const merged = new Set<ts.Node>(mapSymbol.declarations ?? [])
  for (const sf of program.getSourceFiles()) {
    if (!isRepoSource(sf) || !sf.text.includes('SessionEventMap')) continue
    const visit = (n: ts.Node, inModule: string | undefined) => {
      if (ts.isInterfaceDeclaration(n) && n.name.text === 'SessionEventMap' && !merged.has(n)) {
        if (inModule !== undefined && inModule !== sessionModule) return // reported above
        const loc = locOf(n)
        const where =
          ts.isModuleBlock(n.parent) &&
          ts.isModuleDeclaration(n.parent.parent) &&
          n.parent.parent.flags & ts.NodeFlags.GlobalAugmentation
            ? '`declare global`'
            : 'this scope'
        problems.push({
          code: 'WRONG_MERGE_MODULE',
          loc,
          message: `${loc}: an interface SessionEventMap declared in ${where} is not the session's event map and its events would be skipped; merge them with \`declare module '${sessionModule}' { interface SessionEventMap { … } }\``,
        })
      }
      const mod = ts.isModuleDeclaration(n) && ts.isStringLiteral(n.name) ? n.name.text : inModule
      ts.forEachChild(n, (c) => visit(c, mod))
    }
    visit(sf, undefined)
  }

  // The events: every member of every declaration merged into SessionEventMap.
  const surfaceSymbol = sessionExports.get('SurfaceEventType')
  const surface = new Set<string>()
  if (surfaceSymbol) {
    const t = checker.getDeclaredTypeOfSymbol(surfaceSymbol)
    for (const m of t.flags & ts.TypeFlags.Union ? (t as ts.UnionType).types : [t]) {
      if (m.flags & ts.TypeFlags.StringLiteral) surface.add((m as ts.StringLiteralType).value)
    }
  }
  const builder = new GraphBuilder(program, locate, (node) =>
    locate(node) === undefined ? undefined : refOf(node),
  )
  const seen = new Map<string, string>()
  const events: EventModel[] = []
  const mapType = checker.getDeclaredTypeOfSymbol(mapSymbol)
  const decls = (mapSymbol.declarations ?? []).filter(ts.isInterfaceDeclaration)
  for (const decl of decls) {
    const sf = decl.getSourceFile()
    for (const member of decl.members) {
      const loc = locOf(member.name ?? member)
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
      const owner = ownerOf(sf.fileName)?.name ?? '(unknown)'
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
        ref: refOf(member),
        ...exampleOf(member),
        doc: docTextOf(member),
        declaration: declarationText(member, sf),
        refs: refs.map((r) => ({ name: r.name, classId: r.node })),
        rootClass: rootNode,
      })
    }
  }

  // The logical header is persisted beside the log: fingerprint it too.
  let header: { node: number; loc: SourceLoc } | undefined
  const headerSymbol = sessionExports.get('SessionHeader')
  if (headerSymbol?.declarations?.[0]) {
    const loc = locOf(headerSymbol.declarations[0])
    header = {
      node: builder.nodeFor(checker.getDeclaredTypeOfSymbol(headerSymbol), {
        event: '(header)',
        path: 'header',
        loc,
      }),
      loc: refOf(headerSymbol.declarations[0]),
    }
  }

  // Refinement tags on a plain alias of a primitive (`type Id = string`) would be lost: the
  // checker does not keep such aliases, so the tags could never reach a validator. Refuse them.
  for (const sf of program.getSourceFiles()) {
    if (
      !isRepoSource(sf) ||
      !/@(integer|minimum|maximum|exclusiveM|minLength|maxLength|pattern|minItems|maxItems|uniqueItems|uniqueBy)\b/.test(
        sf.text,
      )
    )
      continue
    for (const stmt of sf.statements) {
      if (!ts.isTypeAliasDeclaration(stmt)) continue
      const tags = refinementsOf(stmt, () => {})
      if (!tags) continue
      const t = checker.getTypeAtLocation(stmt.name)
      if (t.aliasSymbol?.declarations?.includes(stmt)) continue
      const loc = locOf(stmt)
      problems.push({
        code: 'REFINEMENT_LOST',
        loc,
        message: `${loc}: refinement tags on type ${stmt.name.text} would be lost: TypeScript does not keep a plain alias of a primitive. Declare it as Brand<…> (as SessionSeq is) or put the tags on each property`,
      })
    }
  }

  // The envelope and the stores' physical types are persisted format too.
  const formatNodes: Array<{ entry: string; name: string; module: string; node: number; loc: SourceLoc }> = []
  const envelopeSymbol = sessionExports.get('EventEnvelope')
  if (envelopeSymbol?.declarations?.[0]) {
    const loc = locOf(envelopeSymbol.declarations[0])
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
      loc: refOf(envelopeSymbol.declarations[0]),
    })
  }
  for (const f of FORMAT_TYPES) {
    if (f.entry === '(header)') continue
    const pkg = packages.find((p) => p.name === f.module)
    const sf = pkg ? program.getSourceFile(pkg.entry) : undefined
    const mod = sf ? checker.getSymbolAtLocation(sf) : undefined
    const sym = mod ? exportsOf(mod).get(f.name) : undefined
    const decl = sym?.declarations?.[0]
    if (!sym || !decl) continue
    const loc = locOf(decl)
    const node = builder.nodeFor(checker.getDeclaredTypeOfSymbol(sym), { event: f.entry, path: f.name, loc })
    formatNodes.push({ entry: f.entry, name: f.name, module: f.module, node, loc: refOf(decl) })
  }
  builder.finish()

  for (const p of builder.problems) problems.push({ ...p })
  problems.push(...compilerProblems(program, root, isRepoSource, [...decls, ...builder.declarations]))

  // Envelope declarations, as written.
  const envelope: EnvelopeDecl[] = []
  for (const group of ENVELOPE_DECLARATIONS) {
    const pkg = packages.find((p) => p.name === group.module)
    const sf = pkg ? program.getSourceFile(pkg.entry) : undefined
    const mod = sf ? checker.getSymbolAtLocation(sf) : undefined
    if (!mod) continue
    const exported = exportsOf(mod)
    for (const name of group.names) {
      const sym = exported.get(name)
      const d = sym?.declarations?.[0]
      if (!d) continue
      const stmt = ts.isVariableDeclaration(d) ? d.parent.parent : d
      envelope.push({
        name,
        module: group.module,
        loc: locOf(d),
        ref: refOf(d),
        text: declarationText(stmt, stmt.getSourceFile()),
      })
    }
  }

  // SESSION_FORMAT_VERSION (the migrations are read from the running code, see migrations.ts).
  let formatVersion = 1
  const versionSymbol = sessionExports.get('SESSION_FORMAT_VERSION')
  if (versionSymbol) {
    const t = checker.getTypeOfSymbol(versionSymbol)
    if (t.flags & ts.TypeFlags.NumberLiteral) formatVersion = (t as ts.NumberLiteralType).value
  }
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
    if (locate(d) === undefined || ownerOf(d.getSourceFile().fileName)?.fixture) continue
    typeDecls[refOf(d)] = declarationText(d, d.getSourceFile())
    const doc = docTextOf(d)
    if (doc !== '') typeDocs[refOf(d)] = doc
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
  const format = formatNodes.map((f) => ({
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
  const reach = new Set<number>()
  const stack = [...roots]
  while (stack.length > 0) {
    const c = stack.pop()!
    if (reach.has(c)) continue
    reach.add(c)
    for (const k of canonical.children[c]!) stack.push(k)
  }
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
