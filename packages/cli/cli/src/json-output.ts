import { randomUUID } from 'node:crypto'
import type { AgentObserver, TurnResult } from '@keel/agent'
import type { SessionEvent } from '@keel/session'
import type {} from '@keel/subagents'
import type {
  InitLine,
  LineEnvelope,
  OutputLine,
  PermissionDenial,
  ResultLine,
  UsageTotals,
} from './output-lines.js'
import { costOf, type PriceTable } from './pricing.js'

/** Version of the `-p --output json|stream-json` objects; changes are additive only. */
export const OUTPUT_SCHEMA_VERSION = 1

/** What the `init` line announces (for feature detection). */
export const OUTPUT_CAPABILITIES = [
  'events',
  'display',
  'usage',
  'interrupt',
  'partial-messages',
  'input-stream',
  'cost',
] as const

/** The `uuid`, `timestamp` and `session_id` of a line written now. */
export function stamp(sessionId: string): LineEnvelope {
  return { uuid: randomUUID(), timestamp: new Date().toISOString(), session_id: sessionId }
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

/** How one turn ended, as {@link resultObject} reports it. */
export interface TurnReport {
  readonly sessionId: string
  readonly result: TurnResult | undefined
  /** The events the turn committed. */
  readonly events: readonly SessionEvent[]
  readonly durationMs: number
  readonly prices: PriceTable
  readonly failure?: { code: string; message: string }
  /** The signal that interrupted it. */
  readonly interrupted?: ResultLine['signal']
}

/** The `result` object: the last line of a turn in stream-json, the whole output of json. */
export function resultObject(report: TurnReport): ResultLine {
  const { result, events, failure, interrupted } = report
  const status: ResultLine['status'] = interrupted
    ? 'interrupted'
    : failure || result === undefined
      ? 'error'
      : statusOf(result.reason)
  const cost = costOf(events, report.prices)
  const out: ResultLine = {
    type: 'result',
    schema_version: OUTPUT_SCHEMA_VERSION,
    ...stamp(report.sessionId),
    status,
    is_error: status !== 'success',
    result: result?.text ?? '',
    num_turns: events.filter((e) => e.type === 'turn/end').length,
    duration_ms: Math.max(0, Math.round(report.durationMs)),
    usage: usageOf(events),
    total_cost_usd: cost.usd ?? null,
    permission_denials: permissionDenials(events),
  }
  if (cost.unpriced.length > 0) out.unpriced_models = [...cost.unpriced]
  if (interrupted) out.signal = interrupted
  if (result) out.reason = result.reason
  const error = failure ?? result?.error
  if (error) out.error = { code: error.code, message: error.message }
  return out
}

function statusOf(reason: TurnResult['reason']): ResultLine['status'] {
  if (reason === 'completed') return 'success'
  if (reason === 'aborted' || reason === 'interrupted') return 'interrupted'
  return reason === 'max-steps' ? 'error_max_steps' : 'error'
}

/** A line before its envelope is added. */
type Unstamped<L> = L extends OutputLine ? Omit<L, keyof LineEnvelope> : never

/**
 * An observer writing one JSON object per line: every committed event (`type: "event"`,
 * with `seq` and the event as stored), plugin notices (`type: "display"`) and, with
 * `partial`, the streamed text and reasoning (`type: "stream_event"`). Lines are held back
 * until {@link JsonLines.open} (after `init`), so events committed while the agent starts
 * (its system prompt) follow the `init` line and carry the session id.
 */
export interface JsonLines {
  readonly observer: AgentObserver
  /** Writes the `init` line, then everything held back, then streams. */
  open(sessionId: string, init: Omit<InitLine, 'type' | 'schema_version' | keyof LineEnvelope>): void
}

export function createJsonLines(
  write: (line: string) => void,
  options: { partial?: boolean } = {},
): JsonLines {
  let sessionId: string | undefined
  const held: Array<{ line: Unstamped<OutputLine>; at: LineEnvelope }> = []
  const emit = (line: Unstamped<OutputLine>) => {
    // The stamp is taken now (a held line keeps the time it happened); the id is filled in at open.
    const at = stamp(sessionId ?? '')
    if (sessionId === undefined) held.push({ line, at })
    else write(jsonLine(ordered(line, at)))
  }
  const delta =
    (type: 'text_delta' | 'reasoning_delta') => (d: { turn: number; step: number; text: string }) =>
      emit({ type: 'stream_event', event: { type, turn: d.turn, step: d.step, text: d.text } })
  return {
    observer: {
      onEvent: (event) => emit({ type: 'event', seq: event.seq, event }),
      onDisplay: (notice) =>
        emit({ type: 'display', source: notice.source, kind: notice.kind, text: notice.text }),
      ...(options.partial
        ? { onTextDelta: delta('text_delta'), onReasoningDelta: delta('reasoning_delta') }
        : {}),
    },
    open(id, init) {
      write(jsonLine({ type: 'init', schema_version: OUTPUT_SCHEMA_VERSION, ...stamp(id), ...init }))
      sessionId = id
      for (const { line, at } of held.splice(0)) write(jsonLine(ordered(line, { ...at, session_id: id })))
    },
  }
}

/** The line with its envelope, `type` first (what a reader of the raw text sees first). */
function ordered(line: Unstamped<OutputLine>, at: LineEnvelope): OutputLine {
  const { type, ...rest } = line
  return { type, ...at, ...rest } as OutputLine
}

/** One JSON object and a newline, with U+2028/U+2029 escaped. */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)
    .replace(/\u2028/gu, '\\u2028')
    .replace(/\u2029/gu, '\\u2029')}\n`
}
