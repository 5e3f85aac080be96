import { isAbsolute, join, resolve } from 'node:path'

/** At most this many imports are followed from one file. */
export const MAX_IMPORTS_PER_FILE = 50

/** Characters a sentence may put right after an import (`see @docs/style.md.`), not part of the path. */
const TRAILING = /[.,;:!?)\]}'"]+$/u

/**
 * The `@path` imports of an instruction file, in order, as Claude Code reads them: a token
 * that starts with `@` at the start of a line or after whitespace, up to the next
 * whitespace (so `me@example.com` is no import), outside fenced code blocks (``` or ~~~)
 * and inline code spans. Trailing sentence punctuation is dropped; duplicates are listed
 * once; at most {@link MAX_IMPORTS_PER_FILE}.
 */
export function findImports(text: string): string[] {
  const found: string[] = []
  let fence: string | null = null
  for (const line of text.split(/\r?\n/u)) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/u.exec(line)?.[1]
    if (marker !== undefined) {
      if (fence === null) fence = marker
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null
      continue
    }
    if (fence !== null) continue
    const prose = line.replace(/(`+)[^`]*?\1/gu, ' ')
    for (const match of prose.matchAll(/(?:^|\s)@(\S+)/gu)) {
      const path = match[1]!.replace(TRAILING, '')
      if (path === '' || path.startsWith('@') || found.includes(path)) continue
      found.push(path)
      if (found.length >= MAX_IMPORTS_PER_FILE) return found
    }
  }
  return found
}

/**
 * The absolute path an import names: `~/…` under `home`, an absolute path as is, anything
 * else relative to the directory of the file that imports it.
 */
export function resolveImport(path: string, importerDir: string, home: string): string {
  if (path === '~') return home
  if (path.startsWith('~/')) return join(home, path.slice(2))
  if (isAbsolute(path)) return resolve(path)
  return resolve(importerDir, path)
}
