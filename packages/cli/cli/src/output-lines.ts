// The objects `keel -p --output json|stream-json` writes, and the ones `--input-format
// stream-json` reads: one declaration each. `pnpm gen-persistence-catalog` turns them into
// their JSON Schema (`docs/stream-json.schema.json`), their reference (`docs/stream-json.md`)
// and their validators (`output-lines.generated.ts`) with the same machinery as the
// persistence catalog, and checks every `@example`. Changes are additive only: a new line
// type, a new optional field; `schema_version` changes when anything else must.
import type { TextBlock } from '@keel/llm'
import type { AgentComposition, ErrorRecord, SessionEvent, TurnEndReason } from '@keel/session'

/** What every output line carries. */
export interface LineEnvelope {
  /**
   * This line's own id (a random UUID), e.g. to deduplicate lines a driving program saw twice.
   * @pattern ^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$
   */
  uuid: string
  /**
   * When the line was written: ISO 8601, UTC, milliseconds.
   * @pattern ^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$
   */
  timestamp: string
  /** The session (`keel resume <id>` continues it). */
  session_id: string
}

/** Token totals of the model calls a turn made (the `usage` of its `assistant/message` events). */
export interface UsageTotals {
  /**
   * @integer
   * @minimum 0
   */
  input_tokens: number
  /**
   * @integer
   * @minimum 0
   */
  output_tokens: number
  /**
   * Input tokens the provider served from its cache (part of `input_tokens`).
   * @integer
   * @minimum 0
   */
  cache_hit_tokens: number
}

/**
 * The first line: what runs, for feature detection.
 * @example {"type":"init","schema_version":1,"uuid":"0b9f8a52-4d0e-4a8e-9d43-3c1f1c6f4a10","timestamp":"2026-05-01T09:30:00.000Z","session_id":"3f2c9a8e-1b7d-4c55-9e0a-2d6b8f1e7c34","cwd":"/home/me/project","model":"deepseek-v4-flash","preset":"coding","composition":{"preset":"coding","plugins":[{"name":"@keel/todo","version":"0.1.0","configDigest":"9c1e"}],"tools":["fs","shell"]},"tools":["read_file","bash"],"capabilities":["events","display","usage","interrupt","partial-messages","input-stream","cost"],"input_format":"text","include_partial_messages":false}
 */
export interface InitLine extends LineEnvelope {
  type: 'init'
  /** The version of these objects; changes are additive only. */
  schema_version: 1
  /** The directory the agent works in. */
  cwd: string
  /** The model id the calls name. */
  model: string
  /** The preset the session runs. */
  preset: string
  /** What the preset resolved to (plugins with versions and config digests, tool groups). */
  composition: AgentComposition
  /** The tools the model is offered. */
  tools: string[]
  /** What this `keel` can do (`partial-messages`, `input-stream`, `cost`, …). */
  capabilities: string[]
  /** How stdin is read: the task as text, or user messages as JSON lines. */
  input_format: 'text' | 'stream-json'
  /** Whether `stream_event` lines follow (`--include-partial-messages`). */
  include_partial_messages: boolean
}

/**
 * One event committed to the session log, as stored (see the persistence catalog).
 * @example {"type":"event","uuid":"7d1e3b0c-9a4f-4e2b-8c61-5f0a9d2e4b17","timestamp":"2026-05-01T09:30:00.120Z","session_id":"3f2c9a8e-1b7d-4c55-9e0a-2d6b8f1e7c34","seq":2,"event":{"type":"turn/start","seq":2,"time":1777627800120,"data":{"turn":1}}}
 */
export interface EventLine extends LineEnvelope {
  type: 'event'
  /**
   * The event's position in the log.
   * @integer
   * @minimum 0
   */
  seq: number
  event: SessionEvent
}

/**
 * Something a plugin wants shown (the todo list, a schedule that fired); not in the log.
 * @example {"type":"display","uuid":"c2a4e6f8-1b3d-4f5a-8c7e-9d0b1a2c3e4f","timestamp":"2026-05-01T09:30:01.000Z","session_id":"3f2c9a8e-1b7d-4c55-9e0a-2d6b8f1e7c34","source":"@keel/todo","kind":"todo-list","text":"[ ] run the tests"}
 */
export interface DisplayLine extends LineEnvelope {
  type: 'display'
  /** The plugin's name. */
  source: string
  /** A short kind a UI may style (`todo-list`, `schedule-fired`, …). */
  kind: string
  /** Plain text, ready to print. */
  text: string
}

/** A piece of the answer or of the reasoning as the model streams it. */
export interface StreamDelta {
  type: 'text_delta' | 'reasoning_delta'
  /**
   * @integer
   * @minimum 1
   */
  turn: number
  /**
   * @integer
   * @minimum 1
   */
  step: number
  text: string
}

/**
 * Streamed model output (`--include-partial-messages`), before the `assistant/message`
 * event that holds it all; never stored piece by piece.
 * @example {"type":"stream_event","uuid":"5e7a9c1b-3d5f-4a7c-9e1b-3d5f7a9c1b3d","timestamp":"2026-05-01T09:30:00.300Z","session_id":"3f2c9a8e-1b7d-4c55-9e0a-2d6b8f1e7c34","event":{"type":"text_delta","turn":1,"step":1,"text":"Hel"}}
 */
export interface StreamEventLine extends LineEnvelope {
  type: 'stream_event'
  event: StreamDelta
}

/** A tool call the permission check refused (a plugin's deny, or an ask nobody allowed). */
export interface PermissionDenial {
  tool_name: string
  tool_use_id: string
  /** The call's arguments (parsed when they are JSON, else the raw text). */
  tool_input: unknown
  /**
   * @minLength 1
   */
  code: string
  /** What the model was told. */
  message: string
}

/**
 * How a turn ended: the last line of `stream-json` (one per message with `--input-format
 * stream-json`), the whole output of `json`. `total_cost_usd` is priced at the models'
 * published prices (or the preset's `prices`); `null` when a model has no price, named in
 * `unpriced_models`.
 * @example {"type":"result","schema_version":1,"uuid":"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d","timestamp":"2026-05-01T09:30:02.000Z","session_id":"3f2c9a8e-1b7d-4c55-9e0a-2d6b8f1e7c34","status":"success","is_error":false,"result":"Hello.","num_turns":1,"duration_ms":1880,"usage":{"input_tokens":1200,"output_tokens":40,"cache_hit_tokens":1024},"total_cost_usd":0.0000391472,"permission_denials":[],"reason":"completed"}
 */
export interface ResultLine extends LineEnvelope {
  type: 'result'
  schema_version: 1
  status: 'success' | 'error' | 'error_max_steps' | 'interrupted'
  /** `status` is not `success`. */
  is_error: boolean
  /** The answer's text (empty when the turn ended without one). */
  result: string
  /**
   * @integer
   * @minimum 0
   */
  num_turns: number
  /**
   * From the start of the `keel` process (the first turn) or of the turn (later ones).
   * @integer
   * @minimum 0
   */
  duration_ms: number
  usage: UsageTotals
  /** US dollars. */
  total_cost_usd: number | null
  /** Models of this turn with no price in the table (then `total_cost_usd` is `null`). */
  unpriced_models?: string[]
  permission_denials: PermissionDenial[]
  /** How the turn ended, when it ran. */
  reason?: TurnEndReason
  /** The signal that interrupted it. */
  signal?: 'SIGINT' | 'SIGTERM' | 'SIGHUP'
  error?: ErrorRecord
}

/** Every object `keel -p --output stream-json` writes, by its `type`. */
export interface OutputLineMap {
  init: InitLine
  event: EventLine
  display: DisplayLine
  stream_event: StreamEventLine
  result: ResultLine
}

/** An image of a user message, base64 without a data-URL prefix. */
export interface InputImageBlock {
  type: 'image'
  source: {
    type: 'base64'
    media_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'
    data: string
  }
}

/**
 * A user message: run as the next turn (queued in the session's inbox while one runs).
 * The fields Claude Code's drivers send along (`session_id`, `uuid`, `parent_tool_use_id`) are
 * accepted and ignored.
 * @example {"type":"user","message":{"role":"user","content":"list the failing tests"}}
 */
export interface UserInputLine {
  type: 'user'
  message: {
    role: 'user'
    content: string | Array<TextBlock | InputImageBlock>
  }
  session_id?: string
  uuid?: string
  parent_tool_use_id?: string | null
}

/**
 * Ends the running turn as Ctrl-C would (its prefix is kept); queued messages still run.
 * @example {"type":"interrupt"}
 */
export interface InterruptInputLine {
  type: 'interrupt'
}

/** Every object `keel -p --input-format stream-json` reads from stdin, one per line, by its `type`. */
export interface InputLineMap {
  user: UserInputLine
  interrupt: InterruptInputLine
}

/** Any output line. */
export type OutputLine = OutputLineMap[keyof OutputLineMap]

/** Any input line. */
export type InputLine = InputLineMap[keyof InputLineMap]
