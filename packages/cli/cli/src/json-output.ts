import type { AgentObserver, TurnResult } from '@keel/agent'
import type { SessionEvent } from '@keel/session'
import type {} from '@keel/subagents'

/** Version of the `-p --output json|stream-json` objects; changes are additive only. */
export const OUTPUT_SCHEMA_VERSION = 1

/** What the `init` line announces (for feature detection). */
export const OUTPUT_CAPABILITIES = ['events', 'display', 'usage', 'interrupt'] as const

/** Token totals of the events a run committed. */
export interface UsageTotals {
  input_tokens: number
  output_tokens: number
  cache_hit_tokens: number
}

/** Sums the usage of the `assistant/message` events and of the subagents they ran (`subagent/settled`). */
export function usageOf(events: readonly SessionEvent[]): UsageTotals {
  const totals: UsageTotals = { input_tokens: 0, output_tokens: 0, cache_hit_tokens: 0 }
  for (const event of events) {
    const usage =
      event.type === 'assistant/message'
        ? event.data.usage
        : event.type === 'subagent/settled'
          ? event.data.usage
          : undefined
    if (!usage) continue
    totals.input_tokens += usage.inputTokens
    totals.output_tokens += usage.outputTokens
    totals.cache_hit_tokens += usage.cacheHitTokens ?? 0
  }
  return totals
}

/** One refused tool call, as the `result` object lists it (`permission_denials`, as `claude -p`). */
export interface PermissionDenial {
  tool_name: string
  tool_use_id: string
  /** The call's arguments (parsed when they are JSON, else the raw text). */
  tool_input: unknown
  code: string
  /** What the model was told. */
  message: string
}

/** The tool calls among `events` that the permission check refused, in log order. */
export function permissionDenials(events: readonly SessionEvent[]): PermissionDenial[] {
  const calls = new Map<string, string>()
  const out: PermissionDenial[] = []
  for (const event of events) {
    if (event.type === 'tool/call') calls.set(event.data.callId, event.data.arguments)
    if (event.type !== 'tool/result') continue
    // refused by the permission chain before it ran (a plugin's deny, or an ask nobody allowed)
    if (event.data.refusedBy === undefined) continue
    const code = event.data.errorCode ?? 'TOOL_DENIED'
    const raw = calls.get(event.data.message.toolCallId) ?? ''
    let input: unknown = raw
    try {
      input = JSON.parse(raw)
    } catch {
      // the model's arguments were not JSON: shown as sent
    }
    out.push({
      tool_name: event.data.message.toolName,
      tool_use_id: event.data.message.toolCallId,
      tool_input: input,
      code,
      message: event.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    })
  }
  return out
}

/** The `result` object: always the last line of stream-json, the whole output of json. */
export function resultObject(
  sessionId: string,
  result: TurnResult | undefined,
  events: readonly SessionEvent[],
  durationMs: number,
  failure?: { code: string; message: string },
  interrupted?: string,
): Record<string, unknown> {
  const status = interrupted
    ? 'interrupted'
    : failure
      ? 'error'
      : result === undefined
        ? 'error'
        : statusOf(result.reason)
  const out: Record<string, unknown> = {
    type: 'result',
    schema_version: OUTPUT_SCHEMA_VERSION,
    session_id: sessionId,
    status,
    is_error: status !== 'success',
    result: result?.text ?? '',
    num_turns: events.filter((e) => e.type === 'turn/end').length,
    duration_ms: durationMs,
    usage: usageOf(events),
    permission_denials: permissionDenials(events),
  }
  if (interrupted) out.signal = interrupted
  if (result) out.reason = result.reason
  const error = failure ?? result?.error
  if (error) out.error = { code: error.code, message: error.message }
  return out
}

function statusOf(reason: TurnResult['reason']): string {
  if (reason === 'completed') return 'success'
  if (reason === 'aborted' || reason === 'interrupted') return 'interrupted'
  return reason === 'max-steps' ? 'error_max_steps' : 'error'
}

/**
 * An observer writing one JSON object per line: every committed event (`type: "event"`,
 * with `seq` and the event as stored) and plugin notices (`type: "display"`). Lines are
 * held back until {@link JsonLines.open} (after `init`), so events committed while the
 * agent starts (its system prompt) follow the `init` line and carry the session id.
 */
export interface JsonLines {
  readonly observer: AgentObserver
  /** Writes the `init` line, then everything held back, then streams. */
  open(sessionId: string, init: Record<string, unknown>): void
}

export function createJsonLines(write: (line: string) => void): JsonLines {
  let sessionId: string | undefined
  const held: Array<Record<string, unknown>> = []
  const emit = (value: Record<string, unknown>) => {
    if (sessionId === undefined) held.push(value)
    else write(jsonLine({ ...value, session_id: sessionId }))
  }
  return {
    observer: {
      onEvent: (event) => emit({ type: 'event', seq: event.seq, event }),
      onDisplay: (notice) =>
        emit({ type: 'display', source: notice.source, kind: notice.kind, text: notice.text }),
    },
    open(id, init) {
      write(jsonLine({ type: 'init', schema_version: OUTPUT_SCHEMA_VERSION, session_id: id, ...init }))
      sessionId = id
      for (const value of held.splice(0)) write(jsonLine({ ...value, session_id: id }))
    },
  }
}

/** One JSON object and a newline, with U+2028/U+2029 escaped. */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)
    .replace(/\u2028/gu, '\\u2028')
    .replace(/\u2029/gu, '\\u2029')}\n`
}
