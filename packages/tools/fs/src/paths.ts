import { realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { ToolCallFacts } from '@keel/tools'
import { FsToolError } from './common.js'

/**
 * The permission facts of a call touching these paths: each as written (`raws[i]`) with
 * the absolute path it is used at (`resolved[i]`, lexical against the working directory:
 * the path the call really opens). One entry each, in the same order, so a permission
 * check can judge every path against its own real location (it follows the symbolic links
 * itself).
 */
export function pathsFacts(raws: readonly string[], resolved: readonly string[]): ToolCallFacts {
  if (raws.length !== resolved.length) {
    throw new Error(`pathsFacts: ${raws.length} raw path(s) but ${resolved.length} resolved`)
  }
  return { rawPaths: [...raws], resolvedPaths: [...resolved] }
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
 * Where `absolute` really is: the real path of its longest existing prefix, with the rest
 * appended as written (a file not created yet lies where its directory really is). The
 * path itself when not even `/` resolves.
 */
export async function realLocationOf(absolute: string): Promise<string> {
  const missing: string[] = []
  for (let current = absolute; ; current = dirname(current)) {
    try {
      return join(await realpath(current), ...missing.reverse())
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(current) === current) return absolute
      missing.push(basename(current))
    }
  }
}

/**
 * Refuses a path that lies inside `root` as written but leads out of it through a symbolic
 * link (`SYMLINK_ESCAPE`, naming the real target so the model can ask for it directly and
 * the permission decision sees it). Paths outside `root` as written are not judged here.
 */
export async function assertNoSymlinkEscape(root: string, raw: string, absolute: string): Promise<void> {
  if (!isInside(root, absolute)) return
  const real = await realLocationOf(absolute)
  const realRoot = await realOrSelf(root)
  if (!isInside(realRoot, real)) {
    throw new FsToolError(
      'SYMLINK_ESCAPE',
      `${raw} is inside the working directory but a symbolic link leads it out, to ${real}; the tools do not follow links out of the directory they work in. Use the target path ${real} itself if you need it.`,
      { path: raw, resolvedPath: absolute, realPath: real },
    )
  }
}
