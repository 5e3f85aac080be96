import { spawn as spawnPty } from '@lydell/node-pty'
import { KEEL_BIN } from './keel-process.js'

/** Removes ANSI escape sequences, so tests match what a person reads. */
export function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>()][0-9A-Za-z]?/gu, '')
}

/** `keel` in a real pseudo-terminal: type into it, wait for what it shows, collect its exit code. */
export class KeelPty {
  readonly #pty: ReturnType<typeof spawnPty>
  #output = ''
  readonly exited: Promise<number>

  constructor(args: readonly string[], env: Record<string, string>, cwd: string) {
    this.#pty = spawnPty(process.execPath, [KEEL_BIN, ...args], {
      name: 'xterm-256color',
      cols: 120,
      rows: 40,
      cwd,
      env: { ...env, TERM: 'xterm-256color' },
    })
    this.#pty.onData((data) => {
      this.#output += data
    })
    this.exited = new Promise((resolve) => this.#pty.onExit(({ exitCode }) => resolve(exitCode)))
  }

  /** Everything shown so far, without escapes. */
  get screen(): string {
    return plain(this.#output)
  }

  write(text: string): void {
    this.#pty.write(text)
  }

  /** Waits until the plain output (after `from` characters) contains `text`; fails with the screen after `ms`. */
  async waitFor(text: string | RegExp, ms = 60_000, from = 0): Promise<void> {
    const deadline = Date.now() + ms
    for (;;) {
      const seen = this.screen.slice(from)
      if (typeof text === 'string' ? seen.includes(text) : text.test(seen)) return
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${String(text)}; the screen shows:\n${this.screen.slice(-3000)}`,
        )
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** The exit code, or a failure showing the screen when keel has not exited within `ms`. */
  exitCode(ms = 60_000): Promise<number> {
    return Promise.race([
      this.exited,
      new Promise<number>((_, reject) =>
        setTimeout(
          () => reject(new Error(`keel did not exit; the screen shows:\n${this.screen.slice(-3000)}`)),
          ms,
        ).unref(),
      ),
    ])
  }

  /** Waits until `test` holds for the whole plain screen. */
  async waitUntil(what: string, test: (screen: string) => boolean, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms
    while (!test(this.screen)) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; the screen shows:\n${this.screen.slice(-3000)}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** Sends `signal` to keel (default SIGHUP, as a closed terminal does). */
  kill(signal?: NodeJS.Signals): void {
    try {
      this.#pty.kill(signal)
    } catch {
      // already gone
    }
  }
}
