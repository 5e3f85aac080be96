import { spawn } from 'node:child_process'

/** How to run one command. */
export interface RunCommandOptions {
  /** The shell command line. */
  readonly command: string
  /** The shell and its flags before the command (`['/bin/sh', '-c']`). */
  readonly shell: readonly [string, ...string[]]
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  /** Written to stdin, which is then closed. */
  readonly stdin: string
  readonly timeoutMs: number
  /** Bytes kept per stream; the rest is drained and dropped. */
  readonly maxOutputBytes: number
  /**
   * After the shell exits, how long to keep reading output a background child may still
   * hold open before giving up on it. Default 1000 ms.
   */
  readonly drainAfterExitMs?: number
}

/** What a command did. Output is decoded as UTF-8 with invalid bytes replaced (never thrown). */
export interface CommandRun {
  /** The exit code; absent when killed by a signal, timed out or never started. */
  readonly exitCode?: number
  readonly signal?: string
  readonly timedOut: boolean
  /** The command could not be started at all (a missing shell, a missing cwd). */
  readonly spawnError?: string
  readonly stdout: string
  readonly stderr: string
  readonly stdoutTruncated: boolean
  readonly stderrTruncated: boolean
  readonly durationMs: number
}

class Bounded {
  readonly #chunks: Buffer[] = []
  #size = 0
  truncated = false
  constructor(readonly limit: number) {}
  push(chunk: Buffer): void {
    const room = this.limit - this.#size
    if (room <= 0) {
      this.truncated = true
      return
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    if (kept.length < chunk.length) this.truncated = true
    this.#chunks.push(kept)
    this.#size += kept.length
  }
  text(): string {
    return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(this.#chunks))
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch (error) {
    // ESRCH: the group is already gone, which is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
  }
}

/**
 * Runs a command in its own process group with JSON on stdin, reading stdout and stderr
 * concurrently while stdin is written (a hook that reads slowly or never cannot deadlock
 * us). At the deadline the whole group is killed and we stop waiting at once, so a
 * grandchild holding stdout cannot stall the caller. Never rejects.
 */
export function runCommand(options: RunCommandOptions): Promise<CommandRun> {
  const started = performance.now()
  const stdout = new Bounded(options.maxOutputBytes)
  const stderr = new Bounded(options.maxOutputBytes)
  return new Promise<CommandRun>((resolvePromise) => {
    let settled = false
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
    let timedOut = false
    let spawnError: string | undefined
    let drainTimer: NodeJS.Timeout | undefined
    const [file, ...flags] = options.shell
    const child = spawn(file, [...flags, options.command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const finish = (): void => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      if (drainTimer) clearTimeout(drainTimer)
      child.stdout?.destroy()
      child.stderr?.destroy()
      child.stdin?.destroy()
      const run: { -readonly [K in keyof CommandRun]: CommandRun[K] } = {
        timedOut,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        durationMs: Math.round(performance.now() - started),
      }
      if (spawnError !== undefined) run.spawnError = spawnError
      else if (!timedOut && exit) {
        if (exit.code !== null) run.exitCode = exit.code
        if (exit.signal !== null) run.signal = exit.signal
      }
      resolvePromise(run)
    }
    const deadline = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
      finish()
    }, options.timeoutMs)
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    // A hook that exits without reading its stdin makes our write fail with EPIPE: expected.
    child.stdin.on('error', () => {})
    child.on('error', (error) => {
      spawnError = error.message
      killGroup(child.pid)
      finish()
    })
    child.on('exit', (code, signal) => {
      exit = { code, signal }
      // Output already in the pipes arrives shortly; a background child still holding them
      // must not keep us waiting.
      drainTimer = setTimeout(finish, options.drainAfterExitMs ?? 1000)
    })
    child.on('close', () => {
      if (exit) finish()
    })
    child.stdin.end(options.stdin)
  })
}
