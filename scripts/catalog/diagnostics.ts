// The compiler's own errors stop the catalog: a program with syntax errors or type errors in a
// persisted declaration can silently drop or mistype events.
import { relative, sep } from 'node:path'
import { ts } from 'ts-morph'
import type { CatalogProblem } from './errors.js'

const posix = (p: string) => p.split(sep).join('/')

/** Diagnostics about imports this loader leaves unresolved on purpose (npm) or that gen writes. */
function expectedUnresolved(d: ts.Diagnostic): boolean {
  if (d.code !== 2307 && d.code !== 2792 && d.code !== 7016) return false
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n')
  const name = /module '([^']+)'/.exec(text)?.[1]
  if (name === undefined) return false
  return /(^|\/)events\.generated\.js$/.test(name) || !(name.startsWith('.') || name.startsWith('/'))
}

/**
 * The compiler's own errors: a syntax error in any package source (it can silently drop a
 * declaration), and any error in a file that declares events or a type an event reaches
 * (`interface P extends NoSuchBase`). Gen and verify refuse to run on them.
 */
export function compilerProblems(
  program: ts.Program,
  root: string,
  isRepoSource: (sf: ts.SourceFile) => boolean,
  reachedDecls: readonly ts.Node[],
): CatalogProblem[] {
  const out: CatalogProblem[] = []
  const report = (d: ts.Diagnostic) => {
    const sf = d.file
    const at = sf && d.start !== undefined ? sf.getLineAndCharacterOfPosition(d.start) : undefined
    const path = sf ? posix(relative(root, sf.fileName)) : '(program)'
    const loc = `${path}:${at ? at.line + 1 : 1}`
    out.push({
      code: 'SOURCE_HAS_ERRORS',
      loc,
      message: `${loc}${at ? `:${at.character + 1}` : ''}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    })
  }
  // The declarations merged into SessionEventMap and every declaration a payload reaches,
  // as source ranges by file.
  const ranges = new Map<ts.SourceFile, Array<[number, number]>>()
  for (const d of reachedDecls) {
    const sf = d.getSourceFile()
    ranges.set(sf, [...(ranges.get(sf) ?? []), [d.getFullStart(), d.getEnd()]])
  }
  for (const sf of program.getSourceFiles()) {
    if (!isRepoSource(sf)) continue
    for (const d of program.getSyntacticDiagnostics(sf)) report(d)
  }
  for (const sf of [...ranges.keys()].sort((a, b) => (a.fileName < b.fileName ? -1 : 1))) {
    if (!isRepoSource(sf) || program.getSyntacticDiagnostics(sf).length > 0) continue
    const inside = ranges.get(sf)!
    for (const d of program.getSemanticDiagnostics(sf)) {
      if (d.start === undefined || expectedUnresolved(d)) continue
      if (inside.some(([a, b]) => d.start! >= a && d.start! < b)) report(d)
    }
  }
  return out
}
