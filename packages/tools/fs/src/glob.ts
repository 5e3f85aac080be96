import { resolve } from 'node:path'
import { defineTool, type Tool } from '@keel/tools'
import { glob } from 'tinyglobby'
import { z } from 'zod'
import {
  checkAborted,
  displayPath,
  FsToolError,
  ignoreGlobs,
  plural,
  resolvePath,
  statPath,
} from './common.js'
import { searchFacts } from './grep.js'
import { assertNoSymlinkEscape, isInside, splitPattern } from './paths.js'

/** Options of {@link globTool}. */
export interface GlobOptions {
  /** Paths shown at most; the rest are counted. Default 500. */
  maxResults?: number
}

const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob pattern, e.g. "**/*.ts", "src/**/test_*.py", "*.{json,yaml}". Matched against paths relative to `path`.',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory to search in, absolute or relative to the working directory. Default: the working directory.',
    ),
})

/** Input of `glob`. */
export type GlobInput = z.infer<typeof globInput>

/**
 * `glob`: files matching a pattern under a directory, sorted by path, shown relative to the
 * working directory. Dotfiles are included; `node_modules` and `.git` are skipped unless
 * the pattern names them. Symbolic links are not followed. A pattern's fixed prefix
 * (`../other/*.ts`, `/etc/*`) is where the search starts, and the facts name it; `..` after
 * a wildcard is refused (`GLOB_PATTERN_ESCAPES`).
 */
export function globTool(options: GlobOptions = {}): Tool<GlobInput> {
  const maxResults = options.maxResults ?? 500
  return defineTool<GlobInput>({
    name: 'glob',
    description:
      'Find files by glob pattern (e.g. "**/*.ts") under a directory. Returns matching file paths sorted by path, relative to the working directory. ' +
      'node_modules and .git are skipped unless the pattern names them.',
    inputSchema: globInput,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    facts: (input, cwd) => searchFacts(cwd, input.path, input.pattern),
    async call(input, ctx) {
      const raw = input.path ?? '.'
      const base = resolvePath(ctx.cwd, raw)
      const st = await statPath(raw, base)
      if (!st.isDirectory()) {
        throw new FsToolError(
          'NOT_A_DIRECTORY',
          `${raw} is not a directory; glob searches under a directory`,
          {
            path: raw,
            resolvedPath: base,
          },
        )
      }
      const { prefix, rest } = splitPattern(input.pattern)
      const root = resolve(base, prefix)
      await assertNoSymlinkEscape(ctx.cwd, raw, base)
      if (isInside(base, root)) await assertNoSymlinkEscape(base, input.pattern, root)
      if (root !== base) {
        const rootStat = await statPath(input.pattern, root).catch(() => undefined)
        if (!rootStat?.isDirectory())
          return `No files match ${JSON.stringify(input.pattern)} under ${raw} (${displayPath(ctx.cwd, root)} is not a directory).`
      }
      const found = await glob(rest, {
        cwd: root,
        absolute: true,
        dot: true,
        onlyFiles: true,
        expandDirectories: false,
        followSymbolicLinks: false,
        ignore: ignoreGlobs(rest),
        signal: ctx.signal,
      })
      checkAborted(ctx.signal) // tinyglobby may stop early on abort and return a partial list
      const shown = found.map((p) => displayPath(ctx.cwd, p)).sort()
      if (shown.length === 0) return `No files match ${JSON.stringify(input.pattern)} under ${raw}.`
      const more =
        shown.length > maxResults
          ? `\n[${shown.length - maxResults} more not shown (${plural(shown.length, 'file')} in total); use a narrower pattern or path.]`
          : `\n[${plural(shown.length, 'file')}]`
      return shown.slice(0, maxResults).join('\n') + more
    },
  })
}
