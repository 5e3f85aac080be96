// The line types of `keel -p --output stream-json` and `--input-format stream-json`, from
// their declarations in `@keel/cli`'s `src/output-lines.ts` (the `OutputLineMap` and
// `InputLineMap` interfaces), through the catalog's own machinery: the same graph builder,
// canonical classes, JSON Schema and zod expressions as the persistence catalog. An event
// line's `event` is `SessionEvent`, so its schema is the catalog's envelopes and payloads.
// output-lines-render.ts writes the validators, the reference and the schema from this model.
import { join } from 'node:path'
import { ts } from 'ts-morph'
import { canonicalize, reachableFrom } from './canonical.js'
import { moduleExports } from './checker-types.js'
import { CatalogError, type CatalogProblem } from './errors.js'
import { compileValidators } from './examples.js'
import type { GNode } from './graph.js'
import { GraphBuilder } from './graph-builder.js'
import { sourceLocator } from './locations.js'
import type { SourceModel } from './model.js'
import { SchemaBuilder } from './schema.js'
import { declarationText, docTextOf, exampleOf, hasDocText } from './source-text.js'
import type { LoadedProject } from './workspace.js'

/** The package and module that declare the line types. */
export const LINES_PACKAGE = '@keel/cli'
export const LINES_MODULE = 'src/output-lines.ts'
/** What is generated from them. */
export const LINES_VALIDATORS = 'src/output-lines.generated.ts'
export const LINES_DOC = 'docs/stream-json.md'
export const LINES_SCHEMA = 'docs/stream-json.schema.json'

/** The two maps: what `keel` writes, and what it reads with `--input-format stream-json`. */
export const LINE_MAPS = ['OutputLineMap', 'InputLineMap'] as const
export type LineMapName = (typeof LINE_MAPS)[number]

/** One line type. */
export interface LineModel {
  map: LineMapName
  /** The `type` value (the map key). */
  type: string
  /** The declared interface's name (`InitLine`). */
  name: string
  doc: string
  declaration: string
  example?: string
  loc: string
  rootClass: number
}

export interface LinesModel {
  /** The package directory relative to the root. */
  dir: string
  lines: LineModel[]
  canonical: SourceModel['canonical']
  schemas: SchemaBuilder
  /** Declarations the lines reach besides the line interfaces (the reference shows them), by name. */
  typeDecls: Array<{ name: string; declaration: string }>
}

/**
 * Drops the envelopes of test fixture events from every union the lines reach: the fixture
 * packages merge into `SessionEventMap` in the loaded program, but their events are not
 * part of the catalog, and so not of what `keel` writes either.
 */
function dropFixtureEnvelopes(nodes: readonly GNode[], fixtureTypes: ReadonlySet<string>): void {
  const envelopeType = (id: number): string | undefined => {
    const n = nodes[id]!
    if (n.kind !== 'object' || !n.props?.some((p) => p.name === 'data')) return undefined
    const t = n.props.find((p) => p.name === 'type')
    const lit = t ? nodes[t.child] : undefined
    return lit?.kind === 'literal' && typeof lit.value === 'string' ? lit.value : undefined
  }
  for (const n of nodes) {
    if (n.kind !== 'union' || !n.members) continue
    n.members = n.members.filter((m) => {
      const t = envelopeType(m)
      return t === undefined || !fixtureTypes.has(t)
    })
  }
}

/** Reads and normalizes the line types; undefined when the workspace has no such module (fixture projects). */
export function buildLinesModel(loaded: LoadedProject, model: SourceModel): LinesModel | undefined {
  const pkg = loaded.packages.find((p) => p.name === LINES_PACKAGE && !p.fixture)
  if (!pkg) return undefined
  const program = loaded.project.getProgram().compilerObject
  const sf = program.getSourceFile(join(loaded.root, pkg.dir, LINES_MODULE))
  if (!sf) return undefined
  const checker = program.getTypeChecker()
  const at = sourceLocator(loaded.root, loaded.packages)
  const problems: CatalogProblem[] = []
  const fail = (loc: string, message: string) =>
    problems.push({ code: 'OUTPUT_LINE_INVALID', loc, message: `${loc}: ${message}` })
  const exports = moduleExports(checker, checker.getSymbolAtLocation(sf)!)
  const builder = new GraphBuilder(program, at.locate, (node) =>
    at.locate(node) === undefined ? undefined : at.refOf(node),
  )
  const lines: LineModel[] = []
  for (const map of LINE_MAPS) {
    const decl = exports.get(map)?.declarations?.find(ts.isInterfaceDeclaration)
    if (!decl) {
      fail(`${pkg.dir}/${LINES_MODULE}:1`, `${LINES_PACKAGE} must export the interface ${map}`)
      continue
    }
    for (const member of decl.members) {
      const loc = at.locOf(member)
      if (!ts.isPropertySignature(member) || !member.type || !ts.isTypeReferenceNode(member.type)) {
        fail(loc, `${map} members are \`type: LineInterface\``)
        continue
      }
      const key = ts.isIdentifier(member.name) || ts.isStringLiteral(member.name) ? member.name.text : '?'
      const type = checker.getTypeFromTypeNode(member.type)
      const target = type.symbol?.declarations?.find(ts.isInterfaceDeclaration)
      if (!target) {
        fail(loc, `${map}['${key}'] must name an interface declared in ${LINES_MODULE}`)
        continue
      }
      const typeProp = checker.getPropertyOfType(type, 'type')
      const typeValue = typeProp ? checker.getTypeOfSymbol(typeProp) : undefined
      if (!typeValue?.isStringLiteral() || typeValue.value !== key)
        fail(at.locOf(target), `${target.name.text}.type must be the literal '${key}' (its key in ${map})`)
      if (!hasDocText(target)) fail(at.locOf(target), `${target.name.text} has no JSDoc`)
      const example = exampleOf(target).example
      if (example === undefined) fail(at.locOf(target), `${target.name.text} has no @example`)
      lines.push({
        map,
        type: key,
        name: target.name.text,
        doc: docTextOf(target),
        declaration: declarationText(target, target.getSourceFile()),
        ...(example === undefined ? {} : { example }),
        loc: at.locOf(target),
        rootClass: builder.nodeFor(type, { event: `line '${key}'`, path: key, loc }),
      })
    }
  }
  builder.finish()
  dropFixtureEnvelopes(builder.nodes, new Set(model.fixtureEvents.map((e) => e.type)))
  // A type that is not JSON stops here; the other problems are reported with the examples'.
  if (builder.problems.length > 0)
    throw new CatalogError([...problems, ...builder.problems.map((p) => ({ ...p }))])

  const canonical = canonicalize(builder.nodes)
  for (const line of lines) line.rootClass = canonical.classOf[line.rootClass]!
  problems.push(...exampleProblems(lines, canonical))
  if (problems.length > 0) throw new CatalogError(problems)
  // The module's other declarations (the envelope, the blocks): the reference shows them too.
  const skip = new Set([...lines.map((l) => l.name), ...LINE_MAPS, 'OutputLine', 'InputLine'])
  const typeDecls: LinesModel['typeDecls'] = []
  for (const d of sf.statements) {
    if (!ts.isInterfaceDeclaration(d) && !ts.isTypeAliasDeclaration(d)) continue
    if (skip.has(d.name.text)) continue
    typeDecls.push({ name: d.name.text, declaration: declarationText(d, sf) })
  }
  const reach = reachableFrom(
    canonical,
    lines.map((l) => l.rootClass),
  )
  return { dir: pkg.dir, lines, canonical, schemas: new SchemaBuilder(canonical, [...reach]), typeDecls }
}

/** Each line's `@example` must be JSON and pass the line's own (generated) validator. */
function exampleProblems(lines: readonly LineModel[], canonical: SourceModel['canonical']): CatalogProblem[] {
  const problems: CatalogProblem[] = []
  for (const map of LINE_MAPS) {
    const of = lines.filter((l) => l.map === map)
    const validators = compileValidators(
      { canonical },
      of.map((l) => ({ type: l.type, rootClass: l.rootClass })),
    )
    for (const line of of) {
      if (line.example === undefined) continue
      let value: unknown
      try {
        value = JSON.parse(line.example)
      } catch (error) {
        problems.push({
          code: 'OUTPUT_LINE_INVALID',
          loc: line.loc,
          message: `${line.loc}: the @example of ${line.name} is not JSON (${(error as Error).message})`,
        })
        continue
      }
      const result = validators.get(line.type)!.safeParse(value)
      if (!result.success) {
        const issue = result.error?.issues[0]
        problems.push({
          code: 'OUTPUT_LINE_INVALID',
          loc: line.loc,
          message: `${line.loc}: the @example of ${line.name} fails its own validator: ${issue ? `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` : 'invalid'}`,
        })
      }
    }
  }
  return problems
}
