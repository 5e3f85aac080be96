import type { Session } from '@keel/session'
import type { HookDialect, HookHandler, HookPoint, LoadedHooks } from './config.js'
import { HOOK_STDERR_SUMMARY_CHARS } from './events.js'
import { type HandlerOutcome, interpretRun } from './outcome.js'
import { runCommand } from './run.js'

/** How handlers are run. */
export interface HookEngineOptions {
  /**
   * The project directory: every handler's cwd, `cwd` on stdin, `$KEEL_PROJECT_DIR`, and
   * `$CLAUDE_PROJECT_DIR` for Claude-Code- and Keel-dialect handlers (Codex sets none).
   */
  readonly projectDir: string
  /** The session: its id goes to `session_id`, and `hook/invoked` / `hook/result` are appended to it. */
  readonly session: Session
  /** `transcript_path` on stdin. */
  readonly transcriptPath: string
  /** `permission_mode` on stdin. Default `default`. */
  readonly permissionMode?: string
  /** The environment handlers inherit (the project dir variables are added). Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv
  /** Overrides every point's default timeout (seconds); a handler's own `timeout` still wins. */
  readonly defaultTimeoutSeconds?: number
  /** Bytes of stdout and of stderr kept per run. Default 1 MiB. */
  readonly maxOutputBytes?: number
  /** Whether a handler may run now (asked at each run: the project's hooks wait for approval). Default: all. */
  readonly admits?: (handler: HookHandler) => boolean
}

/** One handler's run, read. */
export interface HandlerResult {
  readonly handler: HookHandler
  readonly outcome: HandlerOutcome
}

/** What a point's handlers are matched on, and the event's own stdin fields. */
export interface HookInvocation {
  readonly point: HookPoint
  /** Absent outside a turn. */
  readonly turn?: number
  /** Tool name, source, trigger or reason; ignored for UserPromptSubmit and Stop (always fire). */
  readonly matchValue?: string
  /** Event fields added to the common stdin fields. */
  readonly fields: Readonly<Record<string, unknown>>
  /** The turn's abort signal: aborting it kills every running handler's process group. */
  readonly signal?: AbortSignal
}

/**
 * Claude Code's default timeouts today: 600 s, 30 s for UserPromptSubmit, 1.5 s for
 * SessionEnd (session end must not hang a closing agent). Codex: 600 s everywhere.
 */
export function defaultTimeoutSeconds(point: HookPoint, dialect: HookDialect): number {
  if (dialect === 'codex') return 600
  if (point === 'UserPromptSubmit') return 30
  if (point === 'SessionEnd') return 1.5
  return 600
}

const alwaysFire = new Set<HookPoint>(['UserPromptSubmit', 'Stop'])

function summary(text: string): string {
  if (text.length <= HOOK_STDERR_SUMMARY_CHARS) return text
  let cut = text.slice(0, HOOK_STDERR_SUMMARY_CHARS)
  const last = cut.charCodeAt(cut.length - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1)
  return cut
}

/**
 * Runs the handlers of one hook set. Matching handlers of a point run in parallel; results
 * come back in configuration order, so combining them is deterministic. Each run is logged
 * as `hook/invoked` then `hook/result`.
 */
export class HookEngine {
  readonly #hooks: LoadedHooks
  readonly #options: HookEngineOptions

  constructor(hooks: LoadedHooks, options: HookEngineOptions) {
    this.#hooks = hooks
    this.#options = options
  }

  get projectDir(): string {
    return this.#options.projectDir
  }

  /**
   * The handlers that would run for `point` and `matchValue`, in configuration order. As
   * in Claude Code, an identical command listed under several matching groups (or in
   * several settings files) runs once, with the first listing's timeout; Codex runs every
   * listing, so Codex-dialect handlers are never merged.
   */
  matching(point: HookPoint, matchValue?: string): HookHandler[] {
    const seen = new Set<string>()
    const admits = this.#options.admits ?? (() => true)
    return this.#hooks.handlers.filter((h) => {
      if (h.point !== point || !(alwaysFire.has(point) || h.matches(matchValue ?? ''))) return false
      if (!admits(h)) return false
      if (h.dialect === 'codex') return true
      if (seen.has(h.command)) return false
      seen.add(h.command)
      return true
    })
  }

  /** Whether any handler is configured for `point` (cheap check before building stdin). */
  has(point: HookPoint): boolean {
    const admits = this.#options.admits ?? (() => true)
    return this.#hooks.handlers.some((h) => h.point === point && admits(h))
  }

  /** Runs every matching handler of one invocation in parallel. */
  async run(invocation: HookInvocation): Promise<HandlerResult[]> {
    const handlers = this.matching(invocation.point, invocation.matchValue)
    if (handlers.length === 0) return []
    const { session, projectDir } = this.#options
    const stdin = JSON.stringify({
      session_id: session.id,
      transcript_path: this.#options.transcriptPath,
      cwd: projectDir,
      permission_mode: this.#options.permissionMode ?? 'default',
      hook_event_name: invocation.point,
      ...invocation.fields,
    })
    const inherited = this.#options.env ?? process.env
    // Claude Code gives its hooks CLAUDE_PROJECT_DIR; Codex gives none (its scripts must not
    // find one from an unrelated session either).
    const claudeEnv: NodeJS.ProcessEnv = {
      ...inherited,
      CLAUDE_PROJECT_DIR: projectDir,
      KEEL_PROJECT_DIR: projectDir,
    }
    const { CLAUDE_PROJECT_DIR: _dropped, ...withoutClaude } = inherited
    const codexEnv: NodeJS.ProcessEnv = { ...withoutClaude, KEEL_PROJECT_DIR: projectDir }
    const turn = invocation.turn === undefined ? {} : { turn: invocation.turn }
    return Promise.all(
      handlers.map(async (handler) => {
        session.append('hook/invoked', {
          ...turn,
          point: handler.point,
          dialect: handler.dialect,
          ...(handler.matcher === undefined ? {} : { matcher: handler.matcher }),
          handler: handler.id,
        })
        const seconds =
          handler.timeoutSeconds ??
          this.#options.defaultTimeoutSeconds ??
          defaultTimeoutSeconds(handler.point, handler.dialect)
        const env = handler.dialect === 'codex' ? codexEnv : claudeEnv
        const run = await runCommand({
          command: handler.command,
          shell: handler.dialect === 'codex' ? [env.SHELL || '/bin/sh', '-lc'] : ['/bin/sh', '-c'],
          cwd: projectDir,
          env,
          stdin,
          timeoutMs: Math.round(seconds * 1000),
          maxOutputBytes: this.#options.maxOutputBytes ?? 1024 * 1024,
          ...(invocation.signal === undefined ? {} : { signal: invocation.signal }),
        })
        const outcome = interpretRun(handler.point, handler.dialect, run)
        session.append('hook/result', {
          ...turn,
          point: handler.point,
          handler: handler.id,
          decision: outcome.label,
          ...(run.exitCode === undefined ? {} : { exitCode: run.exitCode }),
          stderr: summary(run.stderr),
          durationMs: run.durationMs,
        })
        return { handler, outcome }
      }),
    )
  }
}
