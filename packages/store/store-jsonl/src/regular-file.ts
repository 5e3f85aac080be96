import { NotRegularFile, openRegularFile } from '@keel/base'
import { SessionCorrupt } from '@keel/store'

/**
 * {@link openRegularFile} for a file session `id` cannot be read without (its log, chain, a
 * blob): one that is not a regular file is `SessionCorrupt` naming it. Throws as `openSync`
 * does otherwise (`ENOENT`, …).
 */
export function openSessionFile(id: string, path: string): { fd: number; size: number } {
  try {
    return openRegularFile(path)
  } catch (error) {
    if (error instanceof NotRegularFile) {
      throw new SessionCorrupt(id, { file: error.path }, `it is ${error.what}, not a regular file`)
    }
    throw error
  }
}
