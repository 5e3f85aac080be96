import type { ScriptedResponse } from '@keel/scripted-server'
import { spawn as spawnPty } from '@lydell/node-pty'
import xterm from '@xterm/headless'
import { afterEach } from 'vitest'
import { cleanupList, KEEL_BIN, type KeelRig, keelRig } from './keel-process.js'

/** Removes ANSI escape sequences, so tests match what a person reads. */
export function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>()][0-9A-Za-z]?/gu, '')
}

/**
 * `keel` in a real pseudo-terminal: type into it, wait for what it shows, collect its exit
 * code. Its output is also played into a headless xterm (`@xterm/headless`, the terminal of
 * VS Code), so a test can read the screen a person sees — cursor moves, erases and
 * rewrapping on resize included — not only the stream of text.
 */
export class KeelPty {
  readonly #pty: ReturnType<typeof spawnPty>
  #output = ''
  readonly #term: InstanceType<typeof xterm.Terminal>
  #written: Promise<void> = Promise.resolve()
  readonly exited: Promise<number>

  constructor(
    args: readonly string[],
    env: Record<string, string>,
    cwd: string,
    size = { cols: 120, rows: 40 },
  ) {
    this.#pty = spawnPty(process.execPath, [KEEL_BIN, ...args], {
      name: 'xterm-256color',
      cols: size.cols,
      rows: size.rows,
      cwd,
      env: { ...env, TERM: 'xterm-256color' },
    })
    this.#term = new xterm.Terminal({
      cols: size.cols,
      rows: size.rows,
      scrollback: 5000,
      allowProposedApi: true,
    })
    this.#pty.onData((data) => {
      this.#output += data
      this.#written = new Promise((resolve) => this.#term.write(data, resolve))
    })
    this.exited = new Promise((resolve) => this.#pty.onExit(({ exitCode }) => resolve(exitCode)))
  }

  /** Everything shown so far, without escapes. */
  get screen(): string {
    return plain(this.#output)
  }

  /** Everything keel wrote, escapes included. */
  get output(): string {
    return this.#output
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

  /**
   * Waits for `text` (the prompt, `› `): keel draws its prompt only once the terminal is in
   * raw mode and keys are heard (a key sent before that is read by the terminal's line
   * discipline, not by keel), so typing may start as soon as it shows.
   */
  async ready(text: string, ms = 60_000): Promise<void> {
    await this.waitFor(text, ms)
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

  /** The rows of the terminal's screen as a person sees them now (trailing spaces trimmed). */
  async rows(): Promise<string[]> {
    await this.#written
    const buffer = this.#term.buffer.active
    const rows: string[] = []
    for (let y = 0; y < this.#term.rows; y++)
      rows.push((buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '').trimEnd())
    return rows
  }

  /**
   * The foreground colour of each character of the first screen row containing `text`, from
   * where it starts (`-1` for the terminal's default colour); undefined when no row has it.
   */
  async colorsOf(text: string): Promise<number[] | undefined> {
    const found = await this.#rowWith(text)
    if (!found) return undefined
    return Array.from({ length: text.length }, (_, i) => {
      const cell = found.line.getCell(found.at + i)
      return !cell || cell.isFgDefault() ? -1 : cell.getFgColor()
    })
  }

  /**
   * Whether the cell just after `text` on the first screen row containing it is drawn in
   * inverse video (the input line's cursor); undefined when no row has `text`.
   */
  async inverseAfter(text: string): Promise<boolean | undefined> {
    const found = await this.#rowWith(text)
    if (!found) return undefined
    return found.line.getCell(found.at + text.length)?.isInverse() !== 0
  }

  /** The first screen row containing `text` (once everything written is drawn) and where `text` starts in it. */
  async #rowWith(text: string) {
    await this.#written
    const buffer = this.#term.buffer.active
    for (let y = 0; y < this.#term.rows; y++) {
      const line = buffer.getLine(buffer.viewportY + y)
      const at = line?.translateToString(true).indexOf(text) ?? -1
      if (line && at >= 0) return { line, at }
    }
    return undefined
  }

  /** Waits until `test` holds for the screen's rows; fails with the screen after `ms`. */
  async waitForScreen(what: string, test: (rows: string[]) => boolean, ms = 60_000): Promise<string[]> {
    const deadline = Date.now() + ms
    for (;;) {
      const rows = await this.rows()
      if (test(rows)) return rows
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; the screen shows:\n${rows.join('\n')}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** Resizes the terminal (the pty and the screen model), as dragging the window does. */
  resize(cols: number, rows: number): void {
    this.#pty.resize(cols, rows)
    this.#term.resize(cols, rows)
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

/** Waits until keel is idle again after what was shown so far (the prompt turns from `…` to `›`). */
export async function idle(pty: KeelPty): Promise<void> {
  await pty.waitUntil('keel to be idle', (screen) => screen.lastIndexOf('› ') > screen.lastIndexOf('… '))
}

/**
 * A test file's rigs and pseudo-terminals, closed after each test: `rig(...script)` starts a
 * scripted server and a private KEEL_HOME, `open(r, args)` runs keel against it in a pty.
 */
export function ptyTests() {
  const cleanups = cleanupList()
  afterEach(cleanups.run)
  return {
    async rig(...script: ScriptedResponse[]): Promise<KeelRig> {
      const r = await keelRig(script)
      cleanups.add(() => r.close())
      return r
    },
    open(r: KeelRig, args: string[], cwd = r.cwd): KeelPty {
      const pty = new KeelPty([...args, '--base-url', r.server.baseURL], r.env, cwd)
      cleanups.add(() => pty.kill())
      return pty
    },
  }
}
