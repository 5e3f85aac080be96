import { spawn } from 'node:child_process'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { errorMessage } from '@keel/base'
import {
  defineTool,
  type EnvironmentPolicy,
  type Tool,
  ToolError,
  type ToolOutput,
  toolEnvironment,
} from '@keel/tools'
import { z } from 'zod'
import { CommandOutput } from './output.js'

/** The `errorCode`s the bash tool returns. */
export type ShellErrorCode =
  /** The working directory does not exist. */
  | 'CWD_NOT_FOUND'
  /** The working directory is not a directory. */
  | 'CWD_NOT_A_DIRECTORY'
  /** The shell could not be started. */
  | 'SPAWN_FAILED'
  /** The command ran past its timeout; its process group was killed. The output so far is included. */
  | 'TIMEOUT'
  /** The turn was aborted; the process group was killed. The output so far is included. */
  | 'TOOL_ABORTED'

/** Thrown by the bash tool before the command starts. */
export class ShellToolError extends ToolError<ShellErrorCode> {}

/** Options of {@link bashTool}. */
export interface BashToolOptions {
  /** Timeout when the model gives none. Default 120,000 ms. */
  defaultTimeoutMs?: number
  /** The largest timeout the model may ask for. Default 600,000 ms. */
  maxTimeoutMs?: number
  /**
   * Characters of combined stdout/stderr kept in memory. Past it the complete output is
   * streamed to the call's stored-aside file (bounded by the per-call disk cap) and memory
   * keeps the first 40% and the last 60% of this budget. Default 200,000. The runtime's
   * result cap then decides what the model sees.
   */
  maxOutputChars?: number
  /** Between SIGTERM and SIGKILL to the process group. Default 2,000 ms. */
  killGraceMs?: number
  /** The shell binary. Default `bash`. */
  shell?: string
  /** Extra environment variables, set as given (never filtered). */
  env?: Record<string, string>
  /**
   * Which variables of the agent's environment the command inherits. By default credentials
   * are dropped: variables named like keys, tokens, secrets and passwords, URLs with a
   * password, and any `secretValues` (pass the model adapter's API key). See
   * `EnvironmentPolicy` in `@keel/tools` for `allow` / `deny` lists.
   */
  environment?: EnvironmentPolicy
}

/** At most one progress report (the latest output line) per this many ms. */
const PROGRESS_INTERVAL_MS = 250

const live = new Set<number>()
let exitHookInstalled = false

function killGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

function trackGroup(pid: number): () => void {
  live.add(pid)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    // Commands are detached into their own process groups; do not leave them behind if the agent exits.
    process.once('exit', () => {
      for (const p of live) killGroup(p, 'SIGKILL')
    })
  }
  return () => live.delete(pid)
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}

/**
 * `bash`: runs a command with `bash -c` (not a login shell: no profile scripts, so start-up
 * is fast and predictable) in its own process group (`detached`), stdin closed. On timeout
 * or abort the whole group gets SIGTERM, then SIGKILL after `killGraceMs`, so background
 * children and grandchildren die too. Reports the combined stdout/stderr (capped in
 * memory) and the exit code or signal; the latest output line goes to `ctx.progress`
 * (throttled) for live UIs. A non-zero exit is reported, not an error result:
 * the command ran and its status is information for the model.
 */
export function bashTool(options: BashToolOptions = {}): Tool<BashInput> {
  const defaultTimeout = options.defaultTimeoutMs ?? 120_000
  const maxTimeout = Math.max(options.maxTimeoutMs ?? 600_000, defaultTimeout)
  const maxOutputChars = options.maxOutputChars ?? 200_000
  const grace = options.killGraceMs ?? 2_000
  const shell = options.shell ?? 'bash'
  const schema = bashInputSchema(maxTimeout, defaultTimeout)
  return defineTool<BashInput>({
    name: 'bash',
    description:
      'Run a shell command with bash -c and return its combined stdout/stderr and exit code. ' +
      `Non-interactive: stdin is closed. Default timeout ${seconds(defaultTimeout)} (max ${seconds(maxTimeout)}); on timeout the command and all its child processes are killed. ` +
      'Each call starts a fresh shell in the working directory (or `cwd`): cd and exported variables do not carry over. ' +
      'Prefer read_file/edit_file/glob/grep for reading, editing and searching files.',
    inputSchema: schema,
    annotations: { readOnly: false, destructive: true, openWorld: true, idempotent: false },
    isConcurrencySafe: false,
    // The command's own timeout kills it first (with its output); the call's deadline is the backstop.
    timeoutMs: (input) => (input.timeoutMs ?? defaultTimeout) + grace + 10_000,
    facts: (input, cwd) =>
      input.cwd === undefined
        ? { command: input.command }
        : { command: input.command, rawPaths: [input.cwd], resolvedPaths: [resolve(cwd, input.cwd)] },
    async call(input, ctx): Promise<ToolOutput> {
      const cwd = resolve(ctx.cwd, input.cwd ?? '.')
      try {
        const st = await stat(cwd)
        if (!st.isDirectory()) {
          throw new ShellToolError('CWD_NOT_A_DIRECTORY', `the working directory ${cwd} is not a directory`, {
            cwd,
          })
        }
      } catch (error) {
        if (error instanceof ShellToolError) throw error
        throw new ShellToolError(
          'CWD_NOT_FOUND',
          `the working directory ${cwd} does not exist; pick an existing directory`,
          {
            cwd,
          },
        )
      }
      const timeoutMs = input.timeoutMs ?? defaultTimeout
      const output = new CommandOutput(maxOutputChars, ctx.aside, ctx.callId)
      const { env } = toolEnvironment(options.environment, { PAGER: 'cat', GIT_PAGER: 'cat', ...options.env })
      return await new Promise<ToolOutput>((resolvePromise, reject) => {
        let child: ReturnType<typeof spawn>
        try {
          child = spawn(shell, ['-c', input.command], {
            cwd,
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
            env,
          })
        } catch (error) {
          reject(
            new ShellToolError('SPAWN_FAILED', `could not start ${shell}: ${errorMessage(error)}`, {
              shell,
            }),
          )
          return
        }
        const pid = child.pid
        const untrack = pid === undefined ? () => {} : trackGroup(pid)
        const decoders = { out: new StringDecoder('utf8'), err: new StringDecoder('utf8') }
        let lastProgress = 0
        let paused = false
        const onText = (text: string) => {
          if (!output.push(text) && !paused) {
            // the stored-aside file is behind: stop reading the pipes until it catches up
            paused = true
            child.stdout?.pause()
            child.stderr?.pause()
            void output.drained().then(() => {
              paused = false
              child.stdout?.resume()
              child.stderr?.resume()
            })
          }
          const now = Date.now()
          if (now - lastProgress < PROGRESS_INTERVAL_MS) return
          const lines = text.split('\n').filter((l) => l.trim() !== '')
          const last = lines[lines.length - 1]
          if (last === undefined) return
          lastProgress = now
          ctx.progress({ message: last.length > 200 ? `${last.slice(0, 200)}…` : last })
        }
        child.stdout?.on('data', (chunk: Buffer) => onText(decoders.out.write(chunk)))
        child.stderr?.on('data', (chunk: Buffer) => onText(decoders.err.write(chunk)))

        let stopReason: 'timeout' | 'aborted' | undefined
        let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
        let closed = false
        let settled = false
        let straggling = false
        const timers: ReturnType<typeof setTimeout>[] = []

        const finish = () => {
          if (settled || exit === undefined) return
          settled = true
          for (const t of timers) clearTimeout(t)
          ctx.signal.removeEventListener('abort', onAbort)
          untrack()
          output.push(decoders.out.end())
          output.push(decoders.err.end())
          const ended = exit
          void output.finish().then((collected) => report(collected, ended))
        }

        const report = (
          collected: Awaited<ReturnType<CommandOutput['finish']>>,
          exit: { code: number | null; signal: NodeJS.Signals | null },
        ) => {
          let text = collected.text
          if (text === '') text = '(no output)\n'
          else if (!text.endsWith('\n')) text += '\n'
          const aside = collected.storedAside ? { storedAside: collected.storedAside } : {}
          const notes: string[] = [...collected.notes]
          if (straggling)
            notes.push(
              '[background processes started by the command still hold its output open; their later output is not captured]',
            )
          if (stopReason === 'timeout') {
            notes.push(
              `[timed out after ${seconds(timeoutMs)}; the command and its child processes were killed]`,
            )
            resolvePromise({
              content: [{ type: 'text', text: text + notes.join('\n') }],
              isError: true,
              errorCode: 'TIMEOUT',
              ...aside,
            })
            return
          }
          if (stopReason === 'aborted') {
            notes.push('[aborted; the command and its child processes were killed]')
            resolvePromise({
              content: [{ type: 'text', text: text + notes.join('\n') }],
              isError: true,
              errorCode: 'TOOL_ABORTED',
              ...aside,
            })
            return
          }
          notes.push(
            exit.signal ? `[killed by signal ${exit.signal}]` : `[exit code ${exit.code ?? 'unknown'}]`,
          )
          resolvePromise({ content: [{ type: 'text', text: text + notes.join('\n') }], ...aside })
        }

        /** Background processes still hold the output pipes: stop waiting for them and finish. */
        const stopWaitingForPipes = () => {
          if (closed) return
          straggling = true
          child.stdout?.destroy()
          child.stderr?.destroy()
          closed = true
          finish()
        }
        const stop = (reason: 'timeout' | 'aborted') => {
          if (stopReason !== undefined || settled || pid === undefined) return
          stopReason = reason
          killGroup(pid, 'SIGTERM')
          const t = setTimeout(() => {
            killGroup(pid, 'SIGKILL')
            // Anything that escaped the group (setsid) may still hold the pipes: stop waiting for it.
            const t2 = setTimeout(stopWaitingForPipes, 500)
            timers.push(t2)
          }, grace)
          timers.push(t)
        }
        const onAbort = () => stop('aborted')

        child.on('error', (error) => {
          if (settled) return
          settled = true
          for (const t of timers) clearTimeout(t)
          ctx.signal.removeEventListener('abort', onAbort)
          untrack()
          output.destroy()
          reject(new ShellToolError('SPAWN_FAILED', `could not start ${shell}: ${error.message}`, { shell }))
        })
        child.on('exit', (code, signal) => {
          exit = { code, signal }
          if (closed) finish()
          else if (stopReason === undefined) {
            // The shell is gone; give the pipes a moment to drain, then stop waiting for background children.
            const t = setTimeout(stopWaitingForPipes, 250)
            timers.push(t)
          }
        })
        child.on('close', () => {
          closed = true
          finish()
        })

        timers.push(setTimeout(() => stop('timeout'), timeoutMs))
        if (ctx.signal.aborted) stop('aborted')
        else ctx.signal.addEventListener('abort', onAbort, { once: true })
      })
    },
  })
}

function bashInputSchema(maxTimeoutMs: number, defaultTimeoutMs: number) {
  return z.strictObject({
    command: z.string().min(1).describe('The command line, run with bash -c. Use && to chain steps.'),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Directory to run in, absolute or relative to the working directory. Default: the working directory.',
      ),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(maxTimeoutMs)
      .optional()
      .describe(`Timeout in milliseconds (max ${maxTimeoutMs}). Default ${defaultTimeoutMs}.`),
    description: z
      .string()
      .optional()
      .describe('A few words saying what the command does, shown to the user (e.g. "run the unit tests").'),
  })
}

/** Input of `bash`. */
export interface BashInput {
  command: string
  cwd?: string
  timeoutMs?: number
  description?: string
}
