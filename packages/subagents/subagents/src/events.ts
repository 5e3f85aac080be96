// The events @keel/subagents owns. Declared once, here: `pnpm gen-persistence-catalog`
// generates their validators into events.generated.ts (registered on import) and the catalog.
import type { TokenUsage } from '@keel/llm'
import type { ErrorRecord, SessionId, TurnEndReason } from '@keel/session'
import type { RunPolicy } from '@keel/user-approval'
import './events.generated.js'

/**
 * Where an agent definition came from, highest precedence first: the project
 * (`.keel/agents`, `.claude/agents`), the user (`$KEEL_HOME/agents`, `~/.claude/agents`),
 * or Keel itself (`shipped`).
 */
export type AgentDefinitionSource = 'project' | 'user' | 'shipped'

/**
 * How a child agent's run ended: its turn's end reason, or `not-started` when no child
 * turn ran (the child could not be built), or `interrupted` when the parent stopped while
 * the child ran and the outcome was settled on resume.
 */
export type SubagentOutcome = TurnEndReason | 'not-started'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * Identity and composition of the child agent this session runs (written in the child's
     * log, once, before its first model request; the header's `delegatedBy` names the parent
     * session, turn, call and depth). `agent` is the definition's name, `source` and `file`
     * where it was read, `definitionDigest` the SHA-256 of what was read, `description` what
     * the parent asked for, `model` the model the child runs (absent: the adapter's default),
     * `tools` the tools it was offered, in order, and `policy` the run policy it started under
     * when an approval plugin runs in it. Log-only; after the child's system prompt (and any
     * policy switch that narrowed it), before its first turn.
     * @example {"agent":"explore","source":"shipped","definitionDigest":"sha256:9f2c4e1a","description":"Find where retries are configured","tools":["read_file","list_dir","glob","grep","bash"],"policy":{"approvalPolicy":"on_request","sandboxMode":"read_only"}}
     */
    'subagent/descriptor': {
      /** @minLength 1 */
      agent: string
      source: AgentDefinitionSource
      /** @minLength 1 */
      file?: string
      /** @pattern ^sha256:[0-9a-f]+$ */
      definitionDigest: string
      /** The parent's short description of the task (the `task` call's `description`). */
      description: string
      /** @minLength 1 */
      model?: string
      /** @uniqueItems */
      tools: string[]
      policy?: RunPolicy
    }

    /**
     * A `task` call of this session started a child agent in session `child` of the same
     * store. Log-only; inside the open turn, between the call's `tool/call` and its
     * `tool/result`, and answered by one `subagent/settled` with the same `callId` — unless
     * the process stopped while the child ran, in which case the settlement is written when
     * this session is resumed (outcome `interrupted`).
     * @example {"turn":3,"callId":"call_7","child":"k7f3q9x2m1","agent":"explore","description":"Find where retries are configured"}
     */
    'subagent/spawned': {
      /** @integer @minimum 1 */
      turn: number
      /** @minLength 1 */
      callId: string
      child: SessionId
      /** @minLength 1 */
      agent: string
      description: string
    }

    /**
     * The child agent started by the `subagent/spawned` with the same `callId` is done:
     * `outcome` is how its turn ended, `usage` the tokens of every model call in the child's
     * log (its own children's included), `steps` its model calls, `error` what went wrong
     * when it did not complete. The session's token totals are its own `assistant/message`
     * usage plus the `usage` of these. Log-only; in the parent's turn before the call's
     * `tool/result`, or outside any turn when settled on resume.
     * @example {"callId":"call_7","child":"k7f3q9x2m1","outcome":"completed","usage":{"inputTokens":5210,"outputTokens":388,"totalTokens":5598,"cacheHitTokens":4096},"steps":3}
     */
    'subagent/settled': {
      /** @minLength 1 */
      callId: string
      child: SessionId
      outcome: SubagentOutcome
      usage: TokenUsage
      /** @integer @minimum 0 */
      steps: number
      error?: ErrorRecord
    }
  }
}
