import { errorMessage } from '@keel/base'
import { type AssistantMessage, LlmError, type StreamRecord } from '@keel/llm'
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'
import { StreamIdleTimeoutError } from './sse.js'

/** Where the failure happened: before the response headers, or while reading the stream. */
export type FailurePhase = 'request' | 'stream'

/** Facts {@link classifyError} attaches to the error. */
export interface FailureContext {
  phase: FailurePhase
  where: string
  signal?: AbortSignal
  partial?: AssistantMessage
  record?: StreamRecord
  timeoutMs?: number
}

const contextOverflowText =
  /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|reduce the length/i

/** Milliseconds to wait as the server asked (`retry-after-ms`, then `retry-after` seconds or date). */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms))
  const value = headers.get('retry-after')
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000))
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The server's error text as a clause: trimmed, without its closing full stop (the sentence around it has one). */
function apiMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined
  const text = typeof body?.message === 'string' ? body.message : error.message
  return text.trim().replace(/\.+$/u, '')
}

/** Turns anything the openai client (or the stream) threw into an {@link LlmError} of the right kind. */
export function classifyError(error: unknown, context: FailureContext): LlmError {
  if (error instanceof LlmError) return error
  const { where } = context
  const extra = {
    cause: error,
    ...(context.partial ? { partial: context.partial } : {}),
    ...(context.record ? { record: context.record } : {}),
  }
  const idle = idleCause(error)
  if (idle && !context.signal?.aborted) {
    return new LlmError(
      'stream-idle',
      `The stream from ${where} sent nothing for ${idle.idleTimeoutMs} ms (idleTimeoutMs); the attempt was ended.`,
      extra,
    )
  }
  if (context.signal?.aborted || error instanceof APIUserAbortError) {
    return new LlmError('aborted', `The call to ${where} was aborted by its signal.`, extra)
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new LlmError(
      'network',
      `${where} sent no response headers within ${context.timeoutMs ?? '?'} ms; retry, or raise timeoutMs.`,
      extra,
    )
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return new LlmError(
      'network',
      `Could not reach ${where} (${error.message}${cause}); check the base URL and the network.`,
      extra,
    )
  }
  if (error instanceof APIError) {
    const status = error.status
    const text = apiMessage(error)
    const withStatus = { ...extra, ...(status !== undefined ? { status } : {}) }
    if (status === undefined) {
      // An `error` object inside the stream.
      if (contextOverflowText.test(text)) {
        return new LlmError('context-overflow', `${where} reported in its stream: ${text}`, withStatus)
      }
      return new LlmError('server', `${where} reported an error in its stream: ${text}`, withStatus)
    }
    if (status === 401 || status === 403) {
      return new LlmError(
        'auth',
        `${where} refused the API key (${status}): ${text}. Check DEEPSEEK_API_KEY.`,
        withStatus,
      )
    }
    if (status === 402) {
      return new LlmError(
        'insufficient-balance',
        `${where} reports insufficient balance (402): ${text}. Top up the account.`,
        withStatus,
      )
    }
    if (status === 413 || (status === 400 && contextOverflowText.test(text))) {
      return new LlmError(
        'context-overflow',
        `The request is larger than the model's context window (${status}): ${text}. Compact or shorten the conversation.`,
        withStatus,
      )
    }
    if (status === 429) {
      const wait = retryAfterMs(error.headers)
      return new LlmError('rate-limit', `${where} is rate limiting (429): ${text}.`, {
        ...withStatus,
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      })
    }
    if (status === 408)
      return new LlmError('network', `${where} timed out the request (408): ${text}.`, withStatus)
    if (status >= 500 || status === 409) {
      const wait = retryAfterMs(error.headers)
      return new LlmError('server', `${where} failed (${status}): ${text}.`, {
        ...withStatus,
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      })
    }
    return new LlmError('invalid-request', `${where} rejected the request (${status}): ${text}.`, withStatus)
  }
  if (error instanceof SyntaxError) {
    return new LlmError(
      context.phase === 'stream' ? 'malformed-stream' : 'malformed-response',
      `${where} sent a chunk that is not valid JSON (${error.message}).`,
      extra,
    )
  }
  const message = errorMessage(error)
  if (context.phase === 'stream') {
    return new LlmError(
      'stream-cut',
      `The stream from ${where} broke before it finished (${message}).`,
      extra,
    )
  }
  return new LlmError('network', `The call to ${where} failed (${message}).`, extra)
}

/** The idle-timeout error, thrown as is or wrapped (as `cause`) by the openai client. */
function idleCause(error: unknown): StreamIdleTimeoutError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof StreamIdleTimeoutError) return e
  }
  return undefined
}
