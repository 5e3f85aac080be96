import { opendir } from 'node:fs/promises'
import { join } from 'node:path'
import { SandboxError } from './os-sandbox.js'

/** Directories the protected-folder scan visits at most, by default. */
export const DEFAULT_PROTECTED_SCAN_LIMIT = 20_000

/** Folds a name for comparison: Unicode NFC, lower case, trailing dots and spaces dropped. */
export function foldName(name: string): string {
  return name
    .normalize('NFC')
    .toLowerCase()
    .replace(/[. ]+$/u, '')
}

/**
 * Every directory or file named like one of `names` (`.git`, `.keel`, compared with
 * {@link foldName}) at any depth under `roots`, so the OS sandbox can keep a shell command
 * from writing any of them — a nested repository's `.git/hooks` included. Symbolic links
 * are not followed (what they lead to is outside the walk, or found at its real place);
 * a protected folder is not walked into. Visits at most `limit` directories and refuses
 * past that (`SANDBOX_SCAN_LIMIT`): a command is never run with a guard that may be
 * incomplete. Directories that cannot be read are skipped (nothing in them can be
 * written by the command either).
 */
export async function findProtectedPaths(
  roots: readonly string[],
  names: readonly string[],
  limit: number = DEFAULT_PROTECTED_SCAN_LIMIT,
): Promise<string[]> {
  const wanted = new Set(names.map(foldName))
  const found: string[] = []
  const queue: string[] = [...roots]
  for (let visited = 0; visited < queue.length; visited++) {
    const dir = queue[visited]!
    if (visited >= limit) {
      throw new SandboxError(
        'SANDBOX_SCAN_LIMIT',
        `the workspace has more than ${limit} directories, so not every nested ${names.join('/')} could be found and protected; the command was not run. Raise the approval plugin's protectedScanLimit, or narrow the workspace roots`,
        { limit, roots: [...roots] },
      )
    }
    let handle: Awaited<ReturnType<typeof opendir>>
    try {
      handle = await opendir(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR' || code === 'EPERM') continue
      throw error
    }
    for await (const entry of handle) {
      const path = join(dir, entry.name)
      if (wanted.has(foldName(entry.name))) {
        found.push(path)
        continue
      }
      if (entry.isDirectory()) queue.push(path)
    }
  }
  return found
}
