import { lstat, open } from 'node:fs/promises'
import { resolve } from 'node:path'
import { errorMessage } from '@keel/base'
import { defineTool, type Tool } from '@keel/tools'
import { glob } from 'tinyglobby'
import { z } from 'zod'
import {
  checkAborted,
  displayPath,
  FsToolError,
  ignoreGlobs,
  looksBinary,
  plural,
  resolvePath,
  SNIFF_BYTES,
  statPath,
} from './common.js'
import { assertNoSymlinkEscape, isInside, pathsFacts, realOrSelf, splitPattern } from './paths.js'
import {
  findRipgrep,
  type GrepEngine,
  type LineMatch,
  searchWithJavaScript,
  searchWithRipgrep,
} from './search.js'

/** Options of {@link grepTool}. */
export interface GrepOptions {
  /** Default and upper bound of `maxMatches`. Defaults 200 and 2000. */
  defaultMaxMatches?: number
  maxMatchesLimit?: number
  /** Files larger than this are skipped (and counted). Default 5 MB. */
  maxFileBytes?: number
  /** Matching lines longer than this are cut. Default 300. */
  maxLineChars?: number
  /**
   * `auto` (default): ripgrep when `rg` is on PATH and the pattern is valid for its
   * linear-time engine, else the JavaScript engine in a worker thread; or force one.
   */
  engine?: GrepEngine
  /** The search itself is stopped after this long with `GREP_TIMEOUT`. Default 30,000 ms. */
  searchTimeoutMs?: number
}

const grepInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('JavaScript regular expression searched for in each line, e.g. "function\\s+\\w+" or "TODO".'),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'File or directory to search, absolute or relative to the working directory. Default: the working directory.',
    ),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only search files whose path (relative to `path`) matches this glob, e.g. "**/*.ts". Default: all files.',
    ),
  ignoreCase: z.boolean().optional().describe('Case-insensitive matching. Default false.'),
  maxMatches: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Stop after this many matching lines. Default 200.'),
})

/** Input of `grep`. */
export type GrepInput = z.infer<typeof grepInput>

/**
 * The facts of a grep or glob call: the search path, and the directory the pattern's fixed
 * prefix leads to from it (`../../out/*` under `link-docs` searches `<cwd>/../out`, however
 * `link-docs` is linked), each paired with what was written.
 */
export function searchFacts(cwd: string, path: string | undefined, pattern: string | undefined) {
  const raw = path ?? '.'
  const base = resolve(cwd, raw)
  if (pattern === undefined) return pathsFacts([raw], [base])
  let prefix: string
  try {
    prefix = splitPattern(pattern).prefix
  } catch (error) {
    // The call itself refuses the pattern (GLOB_PATTERN_ESCAPES); there is no root to name.
    if (error instanceof FsToolError && error.code === 'GLOB_PATTERN_ESCAPES')
      return pathsFacts([raw], [base])
    throw error
  }
  return pathsFacts([raw, pattern], [base, resolve(base, prefix)])
}

/** Binary (NUL in the first 8 KB), or text that looks UTF-8 or Latin-1 judging by those bytes. */
async function sniff(file: string): Promise<'binary' | 'utf-8' | 'latin-1'> {
  const handle = await open(file, 'r')
  try {
    const buf = Buffer.alloc(SNIFF_BYTES)
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0)
    const head = buf.subarray(0, bytesRead)
    if (looksBinary(head)) return 'binary'
    try {
      // streaming, never flushed: a character cut by the 8 KB boundary is not an error
      new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true })
      return 'utf-8'
    } catch {
      return 'latin-1'
    }
  } finally {
    await handle.close()
  }
}

function compile(pattern: string, ignoreCase: boolean): string {
  for (const flags of [ignoreCase ? 'iu' : 'u', ignoreCase ? 'i' : '']) {
    try {
      new RegExp(pattern, flags)
      return flags
    } catch (error) {
      if (flags.includes('u')) continue
      throw new FsToolError(
        'GREP_INVALID_PATTERN',
        `${JSON.stringify(pattern)} is not a valid regular expression (${errorMessage(error)}); escape special characters like ( [ . * with a backslash`,
        { pattern },
      )
    }
  }
  return ''
}

/**
 * `grep`: lines matching a regular expression, as `path:line: text`, over one file or the
 * files under a directory (sorted by path, binary and oversized files skipped,
 * `node_modules`/`.git` skipped unless the glob names them, symbolic links leading out of
 * the searched directory not followed), stopping at `maxMatches`. The regex runs in
 * ripgrep (linear time) when it is on PATH, else in a worker thread that a deadline or an
 * abort terminates, so no pattern can block the agent. A `glob` with a fixed prefix
 * (`../other/**`) searches that directory, and the facts name it.
 */
export function grepTool(options: GrepOptions = {}): Tool<GrepInput> {
  const defaultMax = options.defaultMaxMatches ?? 200
  const maxLimit = options.maxMatchesLimit ?? 2000
  const maxFileBytes = options.maxFileBytes ?? 5 * 1024 * 1024
  const maxLineChars = options.maxLineChars ?? 300
  const engine = options.engine ?? 'auto'
  const searchTimeoutMs = options.searchTimeoutMs ?? 30_000
  return defineTool<GrepInput>({
    name: 'grep',
    description:
      'Search file contents with a regular expression (JavaScript syntax). Returns matching lines as "path:line: text", ' +
      `at most ${defaultMax} by default. Search one file or a directory tree, optionally filtered by a glob. Binary files, node_modules and .git are skipped.`,
    inputSchema: grepInput,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    timeoutMs: searchTimeoutMs + 30_000,
    facts: (input, cwd) => searchFacts(cwd, input.path, input.glob),
    async call(input, ctx) {
      const flags = compile(input.pattern, input.ignoreCase === true)
      const maxMatches = Math.min(input.maxMatches ?? defaultMax, maxLimit)
      const raw = input.path ?? '.'
      const base = resolvePath(ctx.cwd, raw)
      await assertNoSymlinkEscape(ctx.cwd, raw, base)
      const st = await statPath(raw, base)
      let candidates: string[]
      let root = base
      if (st.isFile()) candidates = [base]
      else if (st.isDirectory()) {
        const { prefix, rest } = splitPattern(input.glob ?? '**/*')
        root = resolve(base, prefix)
        if (isInside(base, root)) await assertNoSymlinkEscape(base, input.glob ?? raw, root)
        const rootStat = await statPath(input.glob ?? raw, root)
        if (!rootStat.isDirectory()) candidates = [root]
        else
          candidates = await glob(rest, {
            cwd: root,
            absolute: true,
            dot: true,
            onlyFiles: true,
            expandDirectories: false,
            followSymbolicLinks: false,
            ignore: ignoreGlobs(rest),
            signal: ctx.signal,
          })
        candidates.sort()
      } else {
        throw new FsToolError('NOT_A_FILE', `${raw} is neither a file nor a directory`, {
          path: raw,
          resolvedPath: base,
        })
      }
      checkAborted(ctx.signal) // tinyglobby may stop early on abort and return a partial list
      const realRoot = await realOrSelf(
        st.isFile() ? resolve(base, '..') : isInside(base, root) ? base : root,
      )
      const files: string[] = []
      const latin1 = new Set<string>()
      let skippedBinary = 0
      let skippedLarge = 0
      let skippedLinks = 0
      for (const file of candidates) {
        checkAborted(ctx.signal)
        try {
          if ((await lstat(file)).isSymbolicLink() && !isInside(realRoot, await realOrSelf(file))) {
            skippedLinks++
            continue
          }
          const fst = await statPath(file, file)
          if (!fst.isFile()) continue
          if (fst.size > maxFileBytes) {
            skippedLarge++
            continue
          }
          const kind = await sniff(file)
          if (kind === 'binary') {
            skippedBinary++
            continue
          }
          if (kind === 'latin-1') latin1.add(file)
          files.push(file)
        } catch (error) {
          if (candidates.length === 1) throw error
          // vanished or unreadable while searching: skip it
        }
      }
      const searchSignal = AbortSignal.any([ctx.signal, AbortSignal.timeout(searchTimeoutMs)])
      const request = {
        pattern: input.pattern,
        ignoreCase: input.ignoreCase === true,
        files,
        latin1,
        limit: maxMatches,
        signal: searchSignal,
      }
      let found: LineMatch[]
      try {
        const rg = engine === 'javascript' ? undefined : findRipgrep()
        if (engine === 'ripgrep' && rg === undefined) {
          throw new FsToolError(
            'GREP_INVALID_PATTERN',
            'grep is configured to use ripgrep, but rg is not on PATH',
            { engine },
          )
        }
        let result =
          files.length === 0 ? { matches: [] } : rg ? await searchWithRipgrep(rg, request) : undefined
        if (result === undefined || 'unsupported' in result)
          result = await searchWithJavaScript(request, flags)
        if ('unsupported' in result) throw new Error(result.unsupported)
        found = result.matches
      } catch (error) {
        if (error instanceof Error && error.name === 'AbortError' && !ctx.signal.aborted) {
          throw new FsToolError(
            'GREP_TIMEOUT',
            `the search for /${input.pattern}/ was stopped after ${searchTimeoutMs / 1000} s (a pattern with nested repetition like (a+)+ can take exponential time, or the tree is huge); simplify the pattern or narrow path/glob`,
            { pattern: input.pattern, timeoutMs: searchTimeoutMs },
          )
        }
        throw error
      }
      const truncated = found.length > maxMatches
      const shown = found.slice(0, maxMatches)
      const out = shown.map((m) => {
        const text = m.text.length > maxLineChars ? `${m.text.slice(0, maxLineChars)}…` : m.text
        return `${displayPath(ctx.cwd, m.file)}:${m.line}: ${text}`
      })
      const filesWithMatches = new Set(shown.map((m) => m.file)).size
      const notes: string[] = []
      if (skippedBinary > 0) notes.push(`${plural(skippedBinary, 'binary file')} skipped`)
      if (skippedLarge > 0)
        notes.push(`${plural(skippedLarge, 'file')} over ${plural(maxFileBytes, 'byte')} skipped`)
      if (skippedLinks > 0)
        notes.push(
          `${plural(skippedLinks, 'symbolic link')} leading out of ${displayPath(ctx.cwd, root)} not followed`,
        )
      const tail = notes.length > 0 ? `; ${notes.join(', ')}` : ''
      if (shown.length === 0) {
        return `No matches for /${input.pattern}/${input.ignoreCase ? 'i' : ''} in ${plural(files.length, 'file')} under ${raw}${tail}.`
      }
      const summary = truncated
        ? `[Stopped at ${plural(maxMatches, 'match', 'matches')}; there are more. Narrow the pattern, path or glob, or raise maxMatches.${tail}]`
        : `[${plural(shown.length, 'matching line')} in ${plural(filesWithMatches, 'file')}${tail}]`
      return `${out.join('\n')}\n${summary}`
    },
  })
}
