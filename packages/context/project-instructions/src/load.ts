import { createHash } from 'node:crypto'
import { dirname, join, relative } from 'node:path'
import type { InstructionFile, InstructionScope, SkippedInstruction } from './events.js'
import { directoriesDown, findProjectRoot, isInside, readBounded } from './files.js'
import { findImports, resolveImport } from './imports.js'

/** One delivered file: what the event records, plus its text and real location. */
export interface LoadedFile extends InstructionFile {
  readonly text: string
  readonly realPath: string
}

/** What {@link loadInstructions} read: the files to deliver, in order, and what it left out. */
export interface InstructionBundle {
  /** The project root (the git root, else the working directory), a real path. */
  readonly root: string
  readonly files: readonly LoadedFile[]
  readonly skipped: readonly SkippedInstruction[]
}

/** Where to look and how much to take. */
export interface LoadOptions {
  readonly cwd: string
  /** The home directory `~/` in an import expands to. */
  readonly home: string
  /** File names looked for in every directory from the root down to `cwd`, in this order. */
  readonly fileNames: readonly string[]
  /** The user's own file (`$KEEL_HOME/AGENTS.md`), read last; absent to skip it. */
  readonly userFile?: string
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
  /** Import hops followed from a discovered file (Claude Code: 5). */
  readonly maxImportDepth: number
  /**
   * Whether a project file (or import) whose real path lies outside the project may be read
   * (the person approved it, or the policy in force lets every read through).
   */
  mayReadOutside(realPath: string): boolean
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

interface Visit {
  readonly path: string
  readonly shown: string
  readonly scope: InstructionScope
  readonly depth: number
  readonly importedBy?: string
}

/**
 * Reads the instruction files: every `fileNames` entry in each directory from the project
 * root down to `cwd`, then the user's file, each followed by what it imports (depth first,
 * at most `maxImportDepth` hops). Every file is capped at `maxFileBytes` and all of them
 * together at `maxTotalBytes`; a cut is recorded on the file. A file whose real path was
 * already read, or whose text equals one already read, is a `duplicate`. A project file or
 * import resolving outside the project is read only when `mayReadOutside` says so; the
 * user's file and its imports are the user's own and are not confined.
 */
export async function loadInstructions(options: LoadOptions): Promise<InstructionBundle> {
  const { root, cwd } = await findProjectRoot(options.cwd)
  const files: LoadedFile[] = []
  const skipped: SkippedInstruction[] = []
  const seenReal = new Set<string>()
  const seenText = new Set<string>()
  let remaining = options.maxTotalBytes

  const skip = (visit: Visit, reason: SkippedInstruction['reason'], realPath?: string): void => {
    const entry: SkippedInstruction = { path: visit.shown, reason }
    if (visit.importedBy !== undefined) entry.importedBy = visit.importedBy
    if (realPath !== undefined) entry.realPath = realPath
    skipped.push(entry)
  }
  const shownOf = (path: string, scope: InstructionScope): string =>
    scope === 'project' && isInside(path, root) && path !== root ? relative(root, path) : path

  const visit = async (v: Visit): Promise<void> => {
    if (remaining <= 0) {
      if (v.importedBy !== undefined || (await readBounded(v.path, 0)).kind === 'file') skip(v, 'total-cap')
      return
    }
    const limit = Math.min(options.maxFileBytes, remaining)
    const read = await readBounded(v.path, limit)
    if (read.kind === 'missing') {
      if (v.importedBy !== undefined) skip(v, 'not-found')
      return
    }
    if (read.kind === 'not-a-file') return skip(v, 'not-a-file')
    if (read.kind === 'unreadable') return skip(v, 'unreadable')
    if (seenReal.has(read.realPath)) return skip(v, 'duplicate', read.realPath)
    if (v.scope === 'project' && !isInside(read.realPath, root) && !options.mayReadOutside(read.realPath)) {
      return skip(v, 'outside-project', read.realPath)
    }
    seenReal.add(read.realPath)
    const digest = sha256(read.text)
    if (read.text.trim() === '') return
    if (seenText.has(digest)) return skip(v, 'duplicate', read.realPath)
    seenText.add(digest)
    remaining -= read.deliveredBytes
    const file: LoadedFile = {
      path: v.shown,
      scope: v.scope,
      sha256: digest,
      bytes: read.bytes,
      deliveredBytes: read.deliveredBytes,
      text: read.text,
      realPath: read.realPath,
      ...(v.importedBy === undefined ? {} : { importedBy: v.importedBy }),
      ...(read.deliveredBytes >= read.bytes
        ? {}
        : { cut: limit === options.maxFileBytes ? ('file-cap' as const) : ('total-cap' as const) }),
    }
    files.push(file)
    for (const spec of findImports(read.text)) {
      const target = resolveImport(spec, dirname(v.path), options.home)
      const next: Visit = {
        path: target,
        shown: shownOf(target, v.scope),
        scope: v.scope,
        depth: v.depth + 1,
        importedBy: v.shown,
      }
      if (next.depth > options.maxImportDepth) skip(next, 'depth')
      else await visit(next)
    }
  }

  for (const dir of directoriesDown(root, cwd)) {
    for (const name of options.fileNames) {
      const path = join(dir, name)
      await visit({ path, shown: shownOf(path, 'project'), scope: 'project', depth: 0 })
    }
  }
  if (options.userFile !== undefined) {
    await visit({ path: options.userFile, shown: options.userFile, scope: 'user', depth: 0 })
  }
  return { root, files, skipped }
}
