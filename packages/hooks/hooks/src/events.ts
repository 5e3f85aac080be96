import { registerEvents } from '@keel/session'
import { z } from 'zod'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * A hook handler was started. Log-only. `point` is the hook event as Claude Code names it
     * (`PreToolUse`, `Stop`, …); `dialect` whose rules its result is read by (`keel`,
     * `claude`, `codex`); `matcher` the group's matcher as written (absent when it has none);
     * `handler` the stable handler id `<source>:<JSON path>`. `turn` is absent for points
     * outside a turn (session start and end). Exactly one `hook/result` with the same
     * `handler` and `point` follows.
     */
    'hook/invoked': {
      turn?: number
      point:
        | 'SessionStart'
        | 'UserPromptSubmit'
        | 'PreToolUse'
        | 'PostToolUse'
        | 'PostToolUseFailure'
        | 'PreCompact'
        | 'Stop'
        | 'SessionEnd'
      dialect: 'keel' | 'claude' | 'codex'
      matcher?: string
      handler: string
    }
    /**
     * A hook handler finished. Log-only, never replayed into decisions: what the handler
     * decided is already visible in the events it caused (a denied `tool/result`, an added
     * message). `decision` is one of `none` (no opinion), `context` (added model context),
     * `allow`, `ask`, `deny`, `block`, `halt` (`continue: false`), `error` (a non-blocking
     * failure: exit codes other than 0 and 2, a signal, a launch failure, bad JSON) or
     * `timeout` (killed at its deadline, output discarded). `exitCode` is absent when the
     * process was killed or never started; `stderr` holds at most its first 1,000
     * characters; `durationMs` is wall time from spawn to settle.
     */
    'hook/result': {
      turn?: number
      point:
        | 'SessionStart'
        | 'UserPromptSubmit'
        | 'PreToolUse'
        | 'PostToolUse'
        | 'PostToolUseFailure'
        | 'PreCompact'
        | 'Stop'
        | 'SessionEnd'
      handler: string
      decision: 'none' | 'context' | 'allow' | 'ask' | 'deny' | 'block' | 'halt' | 'error' | 'timeout'
      exitCode?: number
      stderr: string
      durationMs: number
    }
  }
}

/** The most characters of stderr a `hook/result` keeps. */
export const HOOK_STDERR_SUMMARY_CHARS = 1000

const turn = z.number().int().positive()
const point = z.enum([
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PreCompact',
  'Stop',
  'SessionEnd',
])

registerEvents('@keel/hooks', {
  'hook/invoked': z.strictObject({
    turn: turn.optional(),
    point,
    dialect: z.enum(['keel', 'claude', 'codex']),
    matcher: z.string().optional(),
    handler: z.string().min(1),
  }),
  'hook/result': z.strictObject({
    turn: turn.optional(),
    point,
    handler: z.string().min(1),
    decision: z.enum(['none', 'context', 'allow', 'ask', 'deny', 'block', 'halt', 'error', 'timeout']),
    exitCode: z.number().int().optional(),
    stderr: z.string().max(HOOK_STDERR_SUMMARY_CHARS),
    durationMs: z.number().nonnegative(),
  }),
})
