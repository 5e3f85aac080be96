import './events.generated.js'

/** A hook point, named as Claude Code names the hook event. */
export type HookPointName =
  | 'SessionStart'
  | 'UserPromptSubmit'
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'PreCompact'
  | 'Stop'
  | 'SessionEnd'

/**
 * What one handler run decided: `none` (no opinion), `context` (added model context),
 * `allow`, `ask`, `deny`, `block`, `halt` (`continue: false`), `error` (a non-blocking
 * failure), `timeout` (killed at its deadline) or `cancelled` (killed because the turn was
 * aborted).
 */
export type HookDecisionLabel =
  | 'none'
  | 'context'
  | 'allow'
  | 'ask'
  | 'deny'
  | 'block'
  | 'halt'
  | 'error'
  | 'timeout'
  | 'cancelled'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * A person approved (or turned down) the hooks of the project's settings files
     * (`.keel/settings.json`, `.claude/settings.json`, `.claude/settings.local.json`,
     * `.codex/hooks.json`) for this session (`/hooks approve`, `/hooks reject`): commands from
     * the repository, which run only once approved. Log-only, inside or outside a turn; the
     * latest wins. It holds for the project hooks whose definitions digest to `digest`: hooks
     * edited since are held and asked about again. Resume keeps it and a fork inherits it.
     * `files` are the settings files the approved hooks come from.
     * @example {"digest":"sha256:4b227777d4dd1fc61c6f884f48641d02b4d121d3fd328cb08b5531fcacdabf8a","decision":"approved","files":["/home/ada/src/app/.claude/settings.json"]}
     */
    'hook/project-approval': {
      /** @pattern ^sha256:[0-9a-f]{64}$ */
      digest: string
      /** Run them in this session (`approved`) or not (`rejected`). */
      decision: 'approved' | 'rejected'
      /** @minItems 1 */
      files: string[]
    }
    /**
     * A hook handler was started. Log-only. `point` is the hook event as Claude Code names it
     * (`PreToolUse`, `Stop`, …); `dialect` whose rules its result is read by (`keel`,
     * `claude`, `codex`); `matcher` the group's matcher as written (absent when it has none);
     * `handler` the stable handler id `<source>:<JSON path>`. `turn` is absent for points
     * outside a turn (session start and end). Exactly one `hook/result` with the same
     * `handler` and `point` follows.
     * @example {"turn":1,"point":"PreToolUse","dialect":"claude","matcher":"Bash","handler":"project:hooks.PreToolUse[0].hooks[0]"}
     */
    'hook/invoked': {
      /** @integer @minimum 1 */
      turn?: number
      point: HookPointName
      dialect: 'keel' | 'claude' | 'codex'
      matcher?: string
      /** @minLength 1 */
      handler: string
    }
    /**
     * A hook handler finished. Log-only, never replayed into decisions: what the handler
     * decided is already visible in the events it caused (a denied `tool/result`, an added
     * message). `decision` is one of `none` (no opinion), `context` (added model context),
     * `allow`, `ask`, `deny`, `block`, `halt` (`continue: false`), `error` (a non-blocking
     * failure: exit codes other than 0 and 2, a signal, a launch failure, bad JSON) or
     * `timeout` (killed at its deadline, output discarded) or `cancelled` (the turn was
     * aborted while it ran: its process group was killed, output discarded). `exitCode` is absent when the
     * process was killed or never started; `stderr` holds at most its first 1,000
     * characters; `durationMs` is wall time from spawn to settle.
     * @example {"turn":1,"point":"PreToolUse","handler":"project:hooks.PreToolUse[0].hooks[0]","decision":"allow","exitCode":0,"stderr":"","durationMs":42}
     */
    'hook/result': {
      /** @integer @minimum 1 */
      turn?: number
      point: HookPointName
      /** @minLength 1 */
      handler: string
      decision: HookDecisionLabel
      /** @integer */
      exitCode?: number
      /** @maxLength 1000 */
      stderr: string
      /** @minimum 0 */
      durationMs: number
    }
  }
}

/** The most characters of stderr a `hook/result` keeps. */
export const HOOK_STDERR_SUMMARY_CHARS = 1000
