import { readdir, readlink, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import { checkAborted, FsToolError, fsFailure, plural, resolvePath, statPath } from './common.js'
import { pathFacts } from './paths.js'

/** Options of {@link listDirTool}. */
export interface ListDirOptions {
  /** Entries shown at most; the rest are counted. Default 1000. */
  maxEntries?: number
}

const listDirInput = z.strictObject({
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Directory to list, absolute or relative to the working directory. Default: the working directory.',
    ),
})

/** Input of `list_dir`. */
export type ListDirInput = z.infer<typeof listDirInput>

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * `list_dir`: the entries of one directory, sorted by name, directories marked with a
 * trailing `/`, files with their size, symbolic links with their target.
 */
export function listDirTool(options: ListDirOptions = {}): Tool<ListDirInput> {
  const maxEntries = options.maxEntries ?? 1000
  return defineTool<ListDirInput>({
    name: 'list_dir',
    description:
      'List the entries of a directory (not recursive): subdirectories end with "/", files show their size, symlinks their target. ' +
      'Use glob to find files by pattern across subdirectories.',
    inputSchema: listDirInput,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    facts: (input, cwd) => pathFacts(cwd, input.path ?? '.'),
    async call(input, ctx) {
      checkAborted(ctx.signal)
      const raw = input.path ?? '.'
      const absolute = resolvePath(ctx.cwd, raw)
      const st = await statPath(raw, absolute)
      if (!st.isDirectory()) {
        throw new FsToolError(
          'NOT_A_DIRECTORY',
          `${raw} is a file, not a directory; use read_file to read it`,
          {
            path: raw,
            resolvedPath: absolute,
          },
        )
      }
      let entries: import('node:fs').Dirent[]
      try {
        entries = await readdir(absolute, { withFileTypes: true })
      } catch (error) {
        throw fsFailure(error, raw, absolute)
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      if (entries.length === 0) return `${raw} is an empty directory.`
      const lines: string[] = []
      for (const entry of entries.slice(0, maxEntries)) {
        checkAborted(ctx.signal)
        const full = join(absolute, entry.name)
        if (entry.isDirectory()) lines.push(`${entry.name}/`)
        else if (entry.isSymbolicLink()) {
          const target = await readlink(full).catch(() => '?')
          const isDir = await stat(full).then(
            (s) => s.isDirectory(),
            () => false,
          )
          lines.push(`${entry.name}${isDir ? '/' : ''} -> ${target}`)
        } else if (entry.isFile()) {
          const bytes = await stat(full).then(
            (s) => s.size,
            () => undefined,
          )
          lines.push(bytes === undefined ? entry.name : `${entry.name}  (${size(bytes)})`)
        } else lines.push(`${entry.name}  (special file)`)
      }
      const header = `${absolute} (${plural(entries.length, 'entry', 'entries')}):`
      const more =
        entries.length > maxEntries
          ? `\n[${entries.length - maxEntries} more entries not shown; use glob to narrow down.]`
          : ''
      return `${header}\n${lines.join('\n')}${more}`
    },
  })
}
