import { readFile } from 'node:fs/promises'
import { defineTool, type Tool } from '@keel/tools'
import { glob } from 'tinyglobby'
import { z } from 'zod'
import {
  checkAborted,
  displayPath,
  FsToolError,
  fsFailure,
  ignoreGlobs,
  looksBinary,
  pathFacts,
  plural,
  resolvePath,
  SNIFF_BYTES,
  statPath,
} from './common.js'

/** Options of {@link grepTool}. */
export interface GrepOptions {
  /** Default and upper bound of `maxMatches`. Defaults 200 and 2000. */
  defaultMaxMatches?: number
  maxMatchesLimit?: number
  /** Files larger than this are skipped (and counted). Default 5 MB. */
  maxFileBytes?: number
  /** Matching lines longer than this are cut. Default 300. */
  maxLineChars?: number
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
 * `grep`: lines matching a regular expression, as `path:line: text`, over one file or the
 * files under a directory (sorted by path, binary and oversized files skipped,
 * `node_modules`/`.git` skipped unless the glob names them), stopping at `maxMatches`.
 */
export function grepTool(options: GrepOptions = {}): Tool<GrepInput> {
  const defaultMax = options.defaultMaxMatches ?? 200
  const maxLimit = options.maxMatchesLimit ?? 2000
  const maxFileBytes = options.maxFileBytes ?? 5 * 1024 * 1024
  const maxLineChars = options.maxLineChars ?? 300
  return defineTool<GrepInput>({
    name: 'grep',
    description:
      'Search file contents with a regular expression (JavaScript syntax). Returns matching lines as "path:line: text", ' +
      `at most ${defaultMax} by default. Search one file or a directory tree, optionally filtered by a glob. Binary files, node_modules and .git are skipped.`,
    inputSchema: grepInput,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    facts: (input, cwd) => pathFacts(cwd, input.path ?? '.'),
    async call(input, ctx) {
      let regex: RegExp
      try {
        regex = new RegExp(input.pattern, input.ignoreCase ? 'iu' : 'u')
      } catch {
        try {
          regex = new RegExp(input.pattern, input.ignoreCase ? 'i' : '')
        } catch (error) {
          throw new FsToolError(
            'GREP_INVALID_PATTERN',
            `${JSON.stringify(input.pattern)} is not a valid regular expression (${error instanceof Error ? error.message : String(error)}); escape special characters like ( [ . * with a backslash`,
            { pattern: input.pattern },
          )
        }
      }
      const maxMatches = Math.min(input.maxMatches ?? defaultMax, maxLimit)
      const raw = input.path ?? '.'
      const base = resolvePath(ctx.cwd, raw)
      const st = await statPath(raw, base)
      let files: string[]
      if (st.isFile()) files = [base]
      else if (st.isDirectory()) {
        const pattern = input.glob ?? '**/*'
        files = (
          await glob(pattern, {
            cwd: base,
            absolute: true,
            dot: true,
            onlyFiles: true,
            expandDirectories: false,
            followSymbolicLinks: false,
            ignore: ignoreGlobs(pattern),
            signal: ctx.signal,
          })
        ).sort()
      } else {
        throw new FsToolError('NOT_A_FILE', `${raw} is neither a file nor a directory`, {
          path: raw,
          resolvedPath: base,
        })
      }
      checkAborted(ctx.signal) // tinyglobby may stop early on abort and return a partial list
      const out: string[] = []
      let matches = 0
      let filesWithMatches = 0
      let skippedBinary = 0
      let skippedLarge = 0
      let truncated = false
      for (const file of files) {
        checkAborted(ctx.signal)
        let bytes: Buffer
        try {
          const fst = files.length === 1 && file === base ? st : await statPath(file, file)
          if (fst.size > maxFileBytes) {
            skippedLarge++
            continue
          }
          bytes = await readFile(file)
        } catch (error) {
          if (files.length === 1) throw error instanceof FsToolError ? error : fsFailure(error, raw, base)
          continue // vanished or unreadable while searching: skip it
        }
        if (looksBinary(bytes.subarray(0, SNIFF_BYTES))) {
          skippedBinary++
          continue
        }
        const shownPath = displayPath(ctx.cwd, file)
        const lines = bytes.toString('utf8').split(/\r?\n/)
        let hit = false
        for (let i = 0; i < lines.length; i++) {
          const line = lines[i]!
          if (!regex.test(line)) continue
          if (matches >= maxMatches) {
            truncated = true
            break
          }
          hit = true
          matches++
          out.push(
            `${shownPath}:${i + 1}: ${line.length > maxLineChars ? `${line.slice(0, maxLineChars)}…` : line}`,
          )
        }
        if (hit) filesWithMatches++
        if (truncated) break
      }
      const notes: string[] = []
      if (skippedBinary > 0) notes.push(`${plural(skippedBinary, 'binary file')} skipped`)
      if (skippedLarge > 0)
        notes.push(`${plural(skippedLarge, 'file')} over ${plural(maxFileBytes, 'byte')} skipped`)
      const tail = notes.length > 0 ? `; ${notes.join(', ')}` : ''
      if (matches === 0) {
        return `No matches for /${input.pattern}/${input.ignoreCase ? 'i' : ''} in ${plural(files.length, 'file')} under ${raw}${tail}.`
      }
      const summary = truncated
        ? `[Stopped at ${plural(maxMatches, 'match', 'matches')}; there are more. Narrow the pattern, path or glob, or raise maxMatches.${tail}]`
        : `[${plural(matches, 'matching line')} in ${plural(filesWithMatches, 'file')}${tail}]`
      return `${out.join('\n')}\n${summary}`
    },
  })
}
