import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'

const made: string[] = []

/** Makes a FIFO at `path` that nobody writes to: a reader opening it blocking waits for ever. */
export function makeFifo(path: string): string {
  execFileSync('mkfifo', [path])
  made.push(path)
  return path
}

/**
 * For `afterEach`: frees a reader stuck in a blocking open of a FIFO {@link makeFifo} made
 * (the defect the tests guard against), so a failing run does not also hold a thread of the
 * pool. A non-blocking open for writing succeeds only when a reader has the FIFO open, and
 * fails with ENXIO when none has.
 */
export function releaseFifos(): void {
  for (const path of made.splice(0)) {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error
    }
  }
}
