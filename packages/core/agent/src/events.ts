import type { ToolResultMessage, UserMessage } from '@keel/llm'
import type { ErrorRecord, StepRef, StoredAside } from '@keel/session'
import './events.generated.js'

/**
 * How one approval question was settled.
 * - `allowed-once`: run this call.
 * - `allowed-session`: run it, and calls matching `rule` without asking for the rest of the
 *   session (forks inherit the rule; the log is the only place it is kept).
 * - `rejected`: someone said no; the model gets `USER_REJECTED` (or `HOOK_DENIED`) with the reason.
 * - `cancelled`: the turn was aborted while the question was open.
 * - `unavailable`: nobody could answer (headless); refused with `APPROVAL_UNAVAILABLE`.
 */
export type ApprovalOutcome = 'allowed-once' | 'allowed-session' | 'rejected' | 'cancelled' | 'unavailable'

/**
 * Who settled an approval question: a hook answerer (`hook`), the user's own earlier
 * "allow for this session" (`session-rule`), a person at an interactive answerer (`user`),
 * or nobody (`none`: cancelled or unavailable).
 */
export type ApprovalAnswerSource = 'hook' | 'session-rule' | 'user' | 'none'

/**
 * A standing "allow for this session": later calls of `toolName` are not asked about
 * again. With `command`, only that exact command line matches (shell tools). With `path`,
 * only calls whose every path lies under that directory (its real location) match. With
 * neither, every call of the tool does. A rule never lifts a sandbox limit: it answers a
 * question, and a call the sandbox refuses is never asked about.
 */
export interface SessionRule {
  /** @minLength 1 */
  toolName: string
  command?: string
  /** @minLength 1 */
  path?: string
}

/** One tool as a step offered it to the model: its name and the digest of what the model saw. */
export interface OfferedTool {
  /** @minLength 1 */
  name: string
  /**
   * `sha256:` and the hex SHA-256 of the tool's spec (name, description, JSON Schema of its
   * parameters) in canonical JSON: equal digests mean the model saw the same tool.
   * @pattern ^sha256:[0-9a-f]{64}$
   */
  digest: string
}

/** Where a command run came from: a person (`user`, typed in a UI), a plugin (`plugin/<name>`), a program. */
export type CommandSource = string

/** How a command run ended: it returned (`success`), or it threw or was aborted (`error`). */
export type CommandOutcome = 'success' | 'error'

/**
 * Which pending list of the agent's inbox a splice edits. `next-turn`: user messages typed
 * while a turn ran (or left when it was interrupted), each to run as a turn of its own, in
 * order.
 */
export type InboxTarget = 'next-turn'

/**
 * Where a value of a request's route came from: a model-selection plugin's choice
 * (`selection`, the `model.active` service), the agent's options (`option`: its `model`,
 * its `contextWindows` entry, which a preset fills), or the adapter (`adapter`: its default
 * model, its capability table).
 */
export type RouteSource = 'selection' | 'option' | 'adapter'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * A `beforeTool` vote was `ask`, and the agent's answerer chain is being consulted (hook
     * answerers, then the session rules, then interactive answerers). Log-only; inside the
     * open turn, before the call's `tool/result`. `id` is unique within the session and is
     * answered by exactly one `approval/decided`. A call is asked about again when a plugin
     * rewrote its input (`tool/input-rewritten`); that later question's `id` gets a `:<n>`
     * suffix. `plugin` is the plugin whose vote asked.
     * @example {"id":"2:call_1","turn":2,"toolName":"bash","callId":"call_1","reason":"no OS sandbox can contain `make` here","plugin":"@keel/user-approval"}
     */
    'approval/asked': {
      /** @minLength 1 */
      id: string
      /** @integer @minimum 1 */
      turn: number
      toolName: string
      callId: string
      reason: string
      /** @minLength 1 */
      plugin?: string
    }

    /**
     * The answer to the `approval/asked` with the same `id`, in the same turn. Exactly one
     * per question. `rule` is present only when `outcome` is `allowed-session`, and is folded
     * into the session's rules (it survives resume and is inherited by forks). `reason`
     * is what the answerer said (a rejection's reason is passed to the model).
     * @example {"id":"2:call_1","turn":2,"outcome":"allowed-session","by":"user","answerer":"keel-terminal","rule":{"toolName":"bash","command":"make"}}
     */
    'approval/decided': {
      /** @minLength 1 */
      id: string
      /** @integer @minimum 1 */
      turn: number
      outcome: ApprovalOutcome
      by: ApprovalAnswerSource
      answerer?: string
      reason?: string
      rule?: SessionRule
    }

    /**
     * A command a plugin registered (`/compact`, `/policy strict`) started. Log-only, inside
     * or outside a turn; answered by exactly one `command/done` with the same `commandId`.
     * `args` is the argument text as given (absent when empty); `source` says who ran it
     * (`user`, `plugin/<name>`). The events a command appends come between the two.
     * @example {"commandId":"cmd-12","name":"policy","args":"strict","source":"user"}
     */
    'command/run': {
      /** @minLength 1 */
      commandId: string
      /** @pattern ^[a-z][a-z0-9-]{0,63}$ */
      name: string
      args?: string
      /** @minLength 1 */
      source: CommandSource
    }

    /**
     * How the `command/run` with the same `commandId` ended. Log-only; exactly one per run.
     * `text` is what the command answered (`success`) or why it failed (`error`: it threw,
     * or it was aborted), cut to a few thousand characters; `errorCode` is the failure's
     * code when it had one.
     * @example {"commandId":"cmd-12","kind":"success","text":"approval policy set to strict"}
     */
    'command/done': {
      /** @minLength 1 */
      commandId: string
      kind: CommandOutcome
      text?: string
      /** @minLength 1 */
      errorCode?: string
    }

    /**
     * One normalized edit of the agent's durable list of pending user messages: the list
     * is the fold of these events (`inboxProjection`), so a crash or a resume keeps what
     * was typed and not yet run. Log-only. The edit is `Array.prototype.splice(start,
     * removedCount ?? 0, ...inserted)` of the `target` list as folded so far, and it is
     * normalized: `start + removedCount` lies within the list, it changes something
     * (removes or inserts), and `removed` and `inserted` share no leading or trailing
     * message (a replacement names only what differs). A removal without `outcome` took
     * the messages to run: the turn that runs the first one follows (its `turn/start`
     * right after). `outcome: 'canceled'` withdrew them unrun (the person took the text
     * back to edit it, or dropped it) and inserts nothing.
     * @example {"target":"next-turn","start":0,"inserted":[{"role":"user","content":[{"type":"text","text":"Then run the linter."}]}]}
     */
    'agent/inbox/spliced': {
      target: InboxTarget
      /** @integer @minimum 0 */
      start: number
      /** @integer @minimum 1 */
      removedCount?: number
      inserted: UserMessage[]
      outcome?: 'canceled'
    }

    /**
     * A model call of the open step failed with a retryable error (rate limit, server error,
     * network failure, stream cut) and the agent will call the model again after `delayMs`.
     * Log-only. It follows the `assistant/attempt` that recorded the failed attempt:
     * `attempt` is that attempt's number (from 1 within the step), so the next try is
     * `attempt + 1`. `error.code` is the model error's code (`LLM_RATE_LIMIT`, …), `status`
     * the HTTP status when there was one, and `retryAfterMs` the wait the server asked for
     * (`Retry-After`), which `delayMs` honours.
     * @example {"turn":1,"step":1,"attempt":1,"delayMs":500,"error":{"code":"LLM_RATE_LIMIT","message":"rate limited"},"status":429,"retryAfterMs":500}
     */
    'llm/retry': StepRef & {
      /** @integer @minimum 1 */
      attempt: number
      /** @integer @minimum 0 */
      delayMs: number
      error: ErrorRecord
      /** @integer */
      status?: number
      /** @integer @minimum 0 */
      retryAfterMs?: number
    }

    /**
     * The tools of one plugin's tool set (`ctx.registerToolSet()`, e.g. the tools of MCP
     * servers) differ from what the log last recorded for that plugin, and the model is
     * offered `tools` (the whole set, latest wins) from step `step` on. Log-only; appended in
     * the open turn right before that step's `step/start`. A set never recorded counts as
     * empty, so an agent whose sets stay empty writes none; a plugin that recorded tools and
     * is no longer in the agent gets one with an empty list. Resume compares the live sets
     * with the latest record per plugin, so a tool that went or changed while the session
     * was closed is logged (and told to the model) at the next step.
     * @example {"turn":3,"step":1,"plugin":"@keel/mcp","tools":[{"name":"mcp__github__search_issues","digest":"sha256:9f2c1e0b7a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b"}]}
     */
    'tool/list-changed': StepRef & {
      /** @minLength 1 */
      plugin: string
      /** @uniqueBy name */
      tools: OfferedTool[]
    }

    /**
     * The route the step's model request takes differs from the one the latest
     * `request/context` recorded (or none was recorded yet): provider, endpoint, model, and
     * the context window and output limit the agent budgets with. Log-only, appended
     * `ignorable`, inside the step before its request is sent (and before its
     * `request/header`). `modelSource` and `windowSource` say where the model id and the
     * window came from; `endpoint` never holds credentials.
     * @example {"turn":3,"step":1,"provider":"deepseek","endpoint":"https://api.deepseek.com","model":"deepseek-v4-pro","modelSource":"selection","contextWindow":1048576,"windowSource":"adapter","maxOutputTokens":384000}
     */
    'request/context': StepRef & {
      /** @minLength 1 */
      provider: string
      /** @minLength 1 */
      endpoint?: string
      /** @minLength 1 */
      model: string
      modelSource: RouteSource
      /** @integer @minimum 1 */
      contextWindow?: number
      windowSource?: RouteSource
      /** @integer @minimum 1 */
      maxOutputTokens?: number
    }

    /**
     * The header of the step's model request — everything it sends besides the messages —
     * differs from the one the latest `request/header` recorded (or none was recorded yet).
     * Log-only, appended `ignorable`, inside the step right before the request is sent.
     * `model` and the parameters are as sent (`maxTokens` is `max_tokens`, `reasoningEffort`
     * is `reasoning_effort`); `tools` names the tools offered, in order, and `toolsDigest`
     * is `sha256:` and the hex SHA-256 of the canonical JSON of their specs (name,
     * description, JSON Schema); `systemDigest` is the same over the texts of the system
     * messages that open the request. With the messages derived from the log up to the
     * step, it says exactly what the step sent.
     * @example {"turn":3,"step":1,"provider":"deepseek","model":"deepseek-v4-pro","maxTokens":8192,"reasoningEffort":"high","tools":["read_file","bash"],"toolsDigest":"sha256:9f2c4c1de1bb4f4f0a0b9d5a4b0e2e5e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a","systemDigest":"sha256:1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f"}
     */
    'request/header': StepRef & {
      /** @minLength 1 */
      provider: string
      /** @minLength 1 */
      model: string
      /** @integer @minimum 1 */
      maxTokens?: number
      temperature?: number
      /** @minLength 1 */
      reasoningEffort?: string
      tools: string[]
      /** @pattern ^sha256:[0-9a-f]{64}$ */
      toolsDigest: string
      /** @pattern ^sha256:[0-9a-f]{64}$ */
      systemDigest: string
    }

    /**
     * A person (or a program driving the agent) ran one of the agent's tools directly,
     * outside any model call — keel's `!cmd` runs the `bash` tool this way. Log-only. A
     * direct run is a turn of its own with one step and no model call: `turn/start`,
     * `step/start`, this event, the permission events any call gets (`tool/input-rewritten`,
     * `approval/asked`, `approval/decided`), exactly one `tool/direct-result` with the same
     * `callId`, `step/end`, then — when the tool ran and the caller shares it — a
     * `user/message` (source `direct/<tool>`) telling the model what ran and what came out,
     * and `turn/end`. `arguments` is the JSON of the input as given; `source` says who ran it.
     * @example {"turn":3,"step":1,"callId":"direct_3","name":"bash","arguments":"{\"command\":\"git status\"}","source":"user"}
     */
    'tool/direct-call': StepRef & {
      /** @minLength 1 */
      callId: string
      /** @minLength 1 */
      name: string
      arguments: string
      /** @minLength 1 */
      source: string
    }

    /**
     * What the `tool/direct-call` with the same `callId` produced: the result as a model
     * call's `tool/result` would carry it (`errorCode` when it failed or did not run,
     * `refusedBy` when the permission chain refused it, `storedAside` for an output over the
     * cap). Log-only: the model sees a direct run only through the `user/message` that may
     * follow it.
     * @example {"turn":3,"step":1,"callId":"direct_3","message":{"role":"tool","toolCallId":"direct_3","toolName":"bash","content":[{"type":"text","text":"On branch main"}]}}
     */
    'tool/direct-result': StepRef & {
      /** @minLength 1 */
      callId: string
      message: ToolResultMessage
      /** @minLength 1 */
      errorCode?: string
      /** @minLength 1 */
      refusedBy?: string
      storedAside?: StoredAside
    }
    /**
     * A plugin's `beforeTool` decision replaced the input of a tool call, and the agent
     * accepted it (it passed the tool's schema and differs from the input before). Log-only:
     * the `tool/call` keeps the arguments as the model sent them, and the model's history is
     * unchanged; `arguments` is the JSON of the input that replaced them (after validation).
     * The `beforeTool` chain then ran again on this input; the call's `tool/result` is what
     * running it produced (or why it did not run). A call rewritten twice has two of these,
     * in order; the last one is what ran.
     * @example {"turn":1,"step":1,"callId":"call-1","plugin":"@keel/hooks","arguments":"{\"path\":\"src/index.ts\"}"}
     */
    'tool/input-rewritten': StepRef & {
      /** @minLength 1 */
      callId: string
      /**
       * The plugin whose decision carried the new input.
       * @minLength 1
       */
      plugin: string
      arguments: string
    }
  }
}
