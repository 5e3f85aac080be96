// Declarations the catalog refuses because they would be silently skipped: `SessionEventMap`
// merged into another module, declared outside the session's map, or merged through a
// re-export under another name; members the checker sees in the map that no declaration the
// catalog reads holds; and refinement tags on a plain alias of a primitive (the checker does
// not keep such aliases).
import { ts } from 'ts-morph'
import type { CatalogProblem } from './errors.js'
import type { SourceLocator } from './locations.js'
import { refinementsOf } from './refinements.js'

/**
 * The map as the code that imports it sees it. The session module's own export can be an
 * earlier merge than what importers get (a merge through a re-export under another name makes
 * a later one): the symbol of every interface declared in a `declare module` block that merges
 * into the map is considered, and the one holding the most declarations wins.
 */
export function mergedMapSymbol(program: ts.Program, at: SourceLocator, mapSymbol: ts.Symbol): ts.Symbol {
  const checker = program.getTypeChecker()
  const base = new Set<ts.Node>(mapSymbol.declarations ?? [])
  let best = mapSymbol
  for (const sf of program.getSourceFiles()) {
    if (!at.isRepoSource(sf)) continue
    for (const stmt of sf.statements) {
      if (!ts.isModuleDeclaration(stmt) || !stmt.body || !ts.isModuleBlock(stmt.body)) continue
      for (const inner of stmt.body.statements) {
        if (!ts.isInterfaceDeclaration(inner)) continue
        const sym = checker.getSymbolAtLocation(inner.name)
        const decls = sym?.declarations ?? []
        if (sym && decls.length > (best.declarations ?? []).length && decls.some((d) => base.has(d)))
          best = sym
      }
    }
  }
  return best
}

/**
 * Merges the catalog does not read as written: an interface merged into the map through a
 * re-export under another name (`declare module './map.js' { interface TodoEvents { … } }`),
 * and members of the map that no interface declaration holds (inherited with `extends`).
 */
export function hiddenMembers(
  checker: ts.TypeChecker,
  at: SourceLocator,
  sessionModule: string,
  mapSymbol: ts.Symbol,
  read: ReadonlySet<string>,
): CatalogProblem[] {
  const problems: CatalogProblem[] = []
  const declared = new Set<string>()
  for (const d of mapSymbol.declarations ?? []) {
    if (!ts.isInterfaceDeclaration(d)) continue
    for (const m of d.members) if (m.name && ts.isStringLiteral(m.name)) declared.add(m.name.text)
    const loc = at.locOf(d)
    if (d.name.text !== 'SessionEventMap') {
      const mod =
        ts.isModuleBlock(d.parent) && ts.isModuleDeclaration(d.parent.parent)
          ? d.parent.parent.name.getText()
          : 'its module'
      problems.push({
        code: 'WRONG_MERGE_MODULE',
        loc,
        message: `${loc}: interface ${d.name.text} of ${mod} merges into SessionEventMap through a re-export under another name; merge events only as \`declare module '${sessionModule}' { interface SessionEventMap { … } }\``,
      })
    }
    if (d.heritageClauses && d.heritageClauses.length > 0) {
      problems.push({
        code: 'WRONG_MERGE_MODULE',
        loc,
        message: `${loc}: SessionEventMap must not extend another interface (its members would not be declared events); declare each event as a member`,
      })
    }
  }
  for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(mapSymbol))) {
    if (read.has(p.name) || declared.has(p.name)) continue
    const decl = p.declarations?.[0]
    const loc = decl ? at.locOf(decl) : `${sessionModule}:1`
    problems.push({
      code: 'WRONG_MERGE_MODULE',
      loc,
      message: `${loc}: the type checker sees event '${p.name}' in SessionEventMap but no declaration the catalog reads declares it; declare it in \`declare module '${sessionModule}' { interface SessionEventMap { … } }\``,
    })
  }
  return problems
}

/** Interfaces named `SessionEventMap` that are not merges into the session module's map. */
export function misplacedMerges(
  program: ts.Program,
  at: SourceLocator,
  sessionModule: string,
  mapSymbol: ts.Symbol,
): CatalogProblem[] {
  const problems: CatalogProblem[] = []
  // Merges into a wrong module: any `declare module 'x'` in a package source that declares an
  // interface named SessionEventMap where 'x' is not the session module.
  for (const sf of program.getSourceFiles()) {
    if (!at.isRepoSource(sf)) continue
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
          const loc = at.locOf(stmt)
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
    if (!at.isRepoSource(sf) || !sf.text.includes('SessionEventMap')) continue
    const visit = (n: ts.Node, inModule: string | undefined) => {
      if (ts.isInterfaceDeclaration(n) && n.name.text === 'SessionEventMap' && !merged.has(n)) {
        if (inModule !== undefined && inModule !== sessionModule) return // reported above
        const loc = at.locOf(n)
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
  return problems
}

/** Type aliases whose refinement tags the checker would drop. */
/** A refinement tag anywhere in a text (a cheap test before parsing for them). */
const TAGGED =
  /@(integer|minimum|maximum|exclusiveM|minLength|maxLength|pattern|minItems|maxItems|uniqueItems|uniqueBy)\b/

/**
 * Start positions of `/** … *\/` comments holding a refinement tag that TypeScript attached to
 * no node as its JSDoc (`{ /** @minLength 1 *\/ text: string }` on one line): tags nobody reads.
 */
function detachedTagComments(sf: ts.SourceFile): number[] {
  const attached = new Set<number>()
  const comments = new Set<number>()
  const visit = (n: ts.Node): void => {
    for (const doc of ts.getJSDocCommentsAndTags(n)) if (ts.isJSDoc(doc)) attached.add(doc.pos)
    // (after `{` on the same line a comment is the trailing trivia of `{`, not leading)
    const ranges = [
      ...(ts.getLeadingCommentRanges(sf.text, n.pos) ?? []),
      ...(ts.getTrailingCommentRanges(sf.text, n.pos) ?? []),
    ]
    for (const range of ranges) {
      const text = sf.text.slice(range.pos, range.end)
      if (text.startsWith('/**') && TAGGED.test(text)) comments.add(range.pos)
    }
    ts.forEachChild(n, visit)
  }
  visit(sf)
  return [...comments].filter((pos) => !attached.has(pos)).sort((a, b) => a - b)
}

export function lostRefinements(program: ts.Program, at: SourceLocator): CatalogProblem[] {
  const checker = program.getTypeChecker()
  const problems: CatalogProblem[] = []
  // Refinement tags on a plain alias of a primitive (`type Id = string`) would be lost: the
  // checker does not keep such aliases, so the tags could never reach a validator. Refuse them.
  for (const sf of program.getSourceFiles()) {
    if (!at.isRepoSource(sf) || !TAGGED.test(sf.text)) continue
    for (const pos of detachedTagComments(sf)) {
      const line = sf.getLineAndCharacterOfPosition(pos).line + 1
      const file = at.locOf(sf)
      const loc = `${file.slice(0, file.lastIndexOf(':'))}:${line}`
      problems.push({
        code: 'REFINEMENT_LOST',
        loc,
        message: `${loc}: this JSDoc comment with refinement tags belongs to no declaration, so its tags would be ignored: TypeScript attaches a JSDoc comment only when it starts the declaration's line (not after \`{\` on the same line). Put the comment on its own line, just before the property`,
      })
    }
    for (const stmt of sf.statements) {
      if (!ts.isTypeAliasDeclaration(stmt)) continue
      const tags = refinementsOf(stmt, () => {})
      if (!tags) continue
      const t = checker.getTypeAtLocation(stmt.name)
      if (t.aliasSymbol?.declarations?.includes(stmt)) continue
      const loc = at.locOf(stmt)
      problems.push({
        code: 'REFINEMENT_LOST',
        loc,
        message: `${loc}: refinement tags on type ${stmt.name.text} would be lost: TypeScript does not keep a plain alias of a primitive. Declare it as Brand<…> (as SessionSeq is) or put the tags on each property`,
      })
    }
  }
  return problems
}
