// Source locations: `path:line` for messages (ordered by path then line), the declaration
// names the committed catalog uses instead of lines, and which package owns a file.
import { join, relative } from 'node:path'
import { ts } from 'ts-morph'
import { posix, type WorkspacePackage } from './workspace.js'

/** A source location `path:line`, path relative to the repository root. */
export type SourceLoc = string

/** Orders `path:line` locations by path, then numerically by line. */
export function compareLoc(a: string, b: string): number {
  const ia = a.lastIndexOf(':')
  const ib = b.lastIndexOf(':')
  const pa = a.slice(0, ia)
  const pb = b.slice(0, ib)
  if (pa !== pb) return pa < pb ? -1 : 1
  return Number(a.slice(ia + 1)) - Number(b.slice(ib + 1))
}

/** Where nodes are, relative to one repository root. */
export interface SourceLocator {
  /** The package whose directory holds the file (the innermost one). */
  ownerOf(fileName: string): WorkspacePackage | undefined
  /** A file under a package's `src/`. */
  isRepoSource(sf: ts.SourceFile): boolean
  /** `path:line` of a node in a package source; `undefined` outside them. */
  locate(node: ts.Node): SourceLoc | undefined
  /** The declaration's name, `path#SessionEventMap['todo/write']` (a moved line does not change it). */
  refOf(node: ts.Node): string
  /** `path:line`, or `path:?` outside the package sources. */
  locOf(node: ts.Node): SourceLoc
}

export function sourceLocator(root: string, packages: readonly WorkspacePackage[]): SourceLocator {
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
  return { ownerOf, isRepoSource, locate, refOf, locOf }
}
