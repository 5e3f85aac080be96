import { lstat, readlink, realpath } from 'node:fs/promises'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import type { PathFact } from './decide.js'

/** Linux's PATH_MAX, in bytes, including the terminating NUL. */
const PATH_MAX = 4096
/** Linux's NAME_MAX, in bytes. */
const NAME_MAX = 255
/** Symlinks followed before a path is judged a loop (Linux's MAXSYMLINKS). */
const MAX_SYMLINKS = 40

/**
 * The real location of an absolute path: every symlink followed, including a final one
 * that dangles (writing through it would create its target) and magic links such as
 * `/proc/self/root` (their target is read with readlink). Components that do not exist are
 * appended lexically. Returns a problem instead when the path cannot be judged.
 */
export async function realLocation(
  absolute: string,
): Promise<string | { problem: 'too-long' | 'symlink-loop' }> {
  let done = '/'
  let rest = absolute.split('/')
  let links = 0
  while (rest.length > 0) {
    const segment = rest.shift()!
    if (segment === '' || segment === '.') continue
    if (segment === '..') {
      done = resolve(done, '..')
      continue
    }
    const candidate = join(done, segment)
    if (Buffer.byteLength(candidate) >= PATH_MAX) return { problem: 'too-long' }
    let isLink: boolean
    try {
      isLink = (await lstat(candidate)).isSymbolicLink()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENAMETOOLONG') return { problem: 'too-long' }
      if (code === 'ELOOP') return { problem: 'symlink-loop' }
      // Nothing is there (or it cannot be looked into): the rest cannot hold a link we could follow.
      const lexical = resolve(candidate, ...rest.filter((s) => s !== ''))
      return Buffer.byteLength(lexical) >= PATH_MAX ? { problem: 'too-long' } : lexical
    }
    if (!isLink) {
      done = candidate
      continue
    }
    if (++links > MAX_SYMLINKS) return { problem: 'symlink-loop' }
    let target: string
    try {
      target = await readlink(candidate)
    } catch {
      return { problem: 'symlink-loop' }
    }
    if (isAbsolute(target)) done = '/'
    rest = [...target.split('/'), ...rest]
  }
  return done
}

/** Judges one path of a call: raw as written, resolved against `cwd`, and its real location. */
export async function pathFact(
  raw: string,
  resolved: string | undefined,
  cwd: string,
  access: 'read' | 'write',
): Promise<PathFact> {
  if (raw.includes('\0') || (resolved ?? '').includes('\0')) {
    return { raw, resolved: resolved ?? raw, real: null, access, problem: 'nul-byte' }
  }
  const absolute = resolved ?? resolve(cwd, raw)
  const tooLong =
    Buffer.byteLength(absolute) >= PATH_MAX ||
    absolute.split('/').some((s) => Buffer.byteLength(s) > NAME_MAX)
  if (tooLong) return { raw, resolved: absolute, real: null, access, problem: 'too-long' }
  const real = await realLocation(absolute)
  if (typeof real !== 'string') return { raw, resolved: absolute, real: null, access, problem: real.problem }
  return { raw, resolved: absolute, real, access }
}

/** Expands a leading `~` to the home directory and resolves against `cwd`. */
export function expandPath(path: string, cwd: string, home: string = homedir()): string {
  if (path === '~') return home
  if (path.startsWith('~/')) return join(home, path.slice(2))
  return resolve(cwd, path)
}

/** The real path of a directory that must exist (a workspace root); the lexical path when it does not. */
export async function realDirectory(path: string): Promise<string> {
  try {
    return await realpath(path)
  } catch {
    const real = await realLocation(path)
    return typeof real === 'string' ? real : path
  }
}
