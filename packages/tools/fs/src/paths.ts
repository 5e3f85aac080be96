import { realpathSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { ToolCallFacts } from '@keel/tools'
import { FsToolError } from './common.js'

/**
 * The real path of `absolute`: symbolic links resolved in the longest prefix that exists,
 * the rest appended as written. Undefined when even that fails (permissions, loops).
 */
export function realPathOf(absolute: string): string | undefined {
  const missing: string[] = []
  let current = absolute
  for (let depth = 0; depth < 4096; depth++) {
    try {
      return join(realpathSync(current), ...missing.reverse())
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined
      const parent = dirname(current)
      if (parent === current) return undefined
      missing.push(basename(current))
      current = parent
    }
  }
  return undefined
}

/**
 * The permission facts of a call touching these paths: each as written, and each resolved
 * against `cwd` — lexically and, when symbolic links lead elsewhere, as its real path too,
 * so a decision sees where the call really reaches.
 */
export function pathsFacts(raws: readonly string[], resolved: readonly string[]): ToolCallFacts {
  const all = new Set<string>()
  for (const p of resolved) {
    all.add(p)
    const real = realPathOf(p)
    if (real !== undefined) all.add(real)
  }
  return { rawPaths: [...raws], resolvedPaths: [...all] }
}

/** The facts of a call touching one path. */
export function pathFacts(cwd: string, path: string): ToolCallFacts {
  return pathsFacts([path], [resolve(cwd, path)])
}

/** Whether `path` is `root` or inside it (both absolute and normalized). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

const MAGIC = /[*?[\]{}()!+@]/

/** A glob pattern cut into the directory it cannot leave and the part matched under it. */
export interface SplitPattern {
  /** The fixed leading segments (`../outside`, `/etc`, `src/lib`), `''` when none. */
  prefix: string
  /** The rest, matched relative to `resolve(base, prefix)`. */
  rest: string
}

/**
 * Cuts a glob pattern at its first segment holding a glob character: `../outside/*.ts` →
 * `../outside` + `*.ts`, `/etc/**` → `/etc` + `**`, `src/a.ts` → `src` + `a.ts`. The
 * directory a search really starts from is `resolve(base, prefix)`; the facts name it.
 * Throws `GLOB_PATTERN_ESCAPES` when the part after the prefix could climb out of it
 * (`..` inside a wildcard or brace part), because no fixed directory would bound it.
 */
export function splitPattern(pattern: string): SplitPattern {
  const segments = pattern.split('/')
  let i = 0
  while (i < segments.length - 1 && !MAGIC.test(segments[i]!)) i++
  const fixed = segments.slice(0, i)
  const prefix = fixed.length === 1 && fixed[0] === '' ? '/' : fixed.join('/')
  const rest = segments.slice(i).join('/')
  if (/(^|[/{,])\.\.($|[/},])/.test(rest)) {
    throw new FsToolError(
      'GLOB_PATTERN_ESCAPES',
      `the pattern ${JSON.stringify(pattern)} climbs out of its directory with ".." after a wildcard; put the directory in \`path\` (or a fixed prefix like "../dir/**") and keep ".." out of the wildcard part`,
      { pattern },
    )
  }
  return { prefix, rest: rest === '' ? '**' : rest }
}

/** The real path of an existing directory or file, or the path itself when it cannot be resolved. */
export async function realOrSelf(absolute: string): Promise<string> {
  try {
    return await realpath(absolute)
  } catch {
    return absolute // missing or unreadable: callers stat it and report that
  }
}

/**
 * Refuses a path that lies inside `root` as written but leads out of it through a symbolic
 * link (`SYMLINK_ESCAPE`, naming the real target so the model can ask for it directly and
 * the permission decision sees it). Paths outside `root` as written are not judged here.
 */
export async function assertNoSymlinkEscape(root: string, raw: string, absolute: string): Promise<void> {
  if (!isInside(root, absolute)) return
  const real = await realOrSelf(absolute)
  const realRoot = await realOrSelf(root)
  if (!isInside(realRoot, real)) {
    throw new FsToolError(
      'SYMLINK_ESCAPE',
      `${raw} is inside the working directory but a symbolic link leads it out, to ${real}; the tools do not follow links out of the directory they work in. Use the target path ${real} itself if you need it.`,
      { path: raw, resolvedPath: absolute, realPath: real },
    )
  }
}
