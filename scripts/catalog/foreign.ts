// Types from outside the repository, wherever a payload's declarations mention them. npm
// imports are never resolved (workspace.ts), so such a type is `any` to the checker, and `any`
// can hide: `Stats extends object ? string : number` resolves to `string | number` whichever
// way the condition goes, and the validator then disagrees with tsc. The payload walk only
// sees resolved types, so this walks the declarations as written: from each event member,
// through every type it references that is declared in the repository, and refuses any
// reference to a type declared elsewhere (npm, `@types/node`) or not at all.
import { join } from 'node:path'
import { ts } from 'ts-morph'
import type { CatalogProblem } from './errors.js'
import type { SourceLocator } from './locations.js'
import { posix } from './workspace.js'

/** Where a walk starts: a declaration and the catalog entry (event type or format entry) it is for. */
export interface ForeignRoot {
  node: ts.Node
  entry: string
}

export interface ForeignReport {
  problems: CatalogProblem[]
  /** Every repository declaration the walk went through (compiler errors inside them are fatal). */
  declarations: ts.Node[]
}

function referenceName(n: ts.Node): ts.Node | undefined {
  if (ts.isTypeReferenceNode(n)) return n.typeName
  if (ts.isExpressionWithTypeArguments(n)) return n.expression
  if (ts.isTypeQueryNode(n)) return n.exprName
  return undefined
}

/** Walks every root's declarations as written; see the file comment. */
export function foreignTypes(
  program: ts.Program,
  root: string,
  at: SourceLocator,
  roots: readonly ForeignRoot[],
): ForeignReport {
  const checker = program.getTypeChecker()
  // In the repository: any file under the root that is not an installed package (a relative
  // import may reach a type outside the package sources; it is still declared here) — or in a
  // package loaded from outside it (`--package`), the same way.
  const under = (f: string, dir: string) =>
    f.startsWith(`${dir}/`) &&
    !f
      .slice(dir.length + 1)
      .split('/')
      .includes('node_modules')
  const inRepo = (sf: ts.SourceFile) => {
    const f = posix(sf.fileName)
    if (under(f, posix(root))) return true
    const owner = at.ownerOf(sf.fileName)
    return owner?.outside === true && under(f, posix(join(root, owner.dir)))
  }
  const problems: CatalogProblem[] = []
  const seen = new Set<ts.Node>()
  const reported = new Set<ts.Node>()
  const declarations: ts.Node[] = []
  const refuse = (ref: ts.Node, entry: string, why: string) => {
    if (reported.has(ref)) return
    reported.add(ref)
    const loc = at.locOf(ref)
    const what = entry.startsWith('(') ? entry : `event '${entry}'`
    problems.push({
      code: 'FOREIGN_TYPE',
      loc,
      event: entry,
      message: `${loc}: ${what} reaches ${ref.getText()}, ${why}; persisted types are declared in this repository (a conditional, mapped or indexed type over an outside type would be read as \`any\`)`,
    })
  }
  for (const root of roots) {
    const queue: ts.Node[] = [root.node]
    while (queue.length > 0) {
      const decl = queue.pop()!
      if (seen.has(decl)) continue
      seen.add(decl)
      declarations.push(decl)
      const visit = (n: ts.Node): void => {
        if (ts.isImportTypeNode(n)) {
          refuse(n, root.entry, 'an import type, not resolved here')
          return
        }
        const name = referenceName(n)
        if (name) {
          let sym = checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name)
          if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym)
          const decls = sym?.declarations ?? []
          if (decls.length === 0)
            refuse(n, root.entry, 'which does not resolve (an npm or @types/node import?)')
          for (const d of decls) {
            const sf = d.getSourceFile()
            if (inRepo(sf)) queue.push(d)
            else if (!program.isSourceFileDefaultLibrary(sf))
              refuse(n, root.entry, `declared outside the repository sources (${posix(sf.fileName)})`)
          }
        }
        ts.forEachChild(n, visit)
      }
      visit(decl)
    }
  }
  return { problems, declarations }
}
