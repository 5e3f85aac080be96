import type { ScriptedFault, ScriptedFinishReason, ScriptedResponse, Split } from './script.js'

/** The usage object of a chat-completions response, DeepSeek flavour. */
export interface WireUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_cache_hit_tokens: number
  prompt_cache_miss_tokens: number
  completion_tokens_details?: { reasoning_tokens: number }
}

/** One `chat.completion.chunk` as sent on the wire. */
export interface WireChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  system_fingerprint: string
  choices: Array<{
    index: 0
    delta: Record<string, unknown>
    logprobs: null
    finish_reason: ScriptedFinishReason | null
  }>
  usage?: WireUsage | null
}

const defaultSizes = { text: 8, reasoning: 8, arguments: 7 } as const

/** Cuts `value` into fragments per `split`; an empty string gives no fragments. */
export function splitString(value: string, split: Split): string[] {
  if (value.length === 0) return []
  const cuts: number[] = []
  if (typeof split === 'number') {
    for (let at = split; at < value.length; at += split) cuts.push(at)
  } else {
    for (const at of [...new Set(split)].sort((a, b) => a - b)) if (at > 0 && at < value.length) cuts.push(at)
  }
  const pieces: string[] = []
  let start = 0
  for (const at of cuts) {
    pieces.push(value.slice(start, at))
    start = at
  }
  pieces.push(value.slice(start))
  return pieces
}

/** Serialized tool-call arguments of a step. */
export function argumentsText(args: string | Record<string, unknown>): string {
  return typeof args === 'string' ? args : JSON.stringify(args)
}

/** The finish reason a step reports. */
export function finishReasonOf(step: ScriptedResponse): ScriptedFinishReason {
  return step.finishReason ?? (step.toolCalls && step.toolCalls.length > 0 ? 'tool_calls' : 'stop')
}

/** The usage a step reports, or `undefined` when it sends none. */
export function usageOf(step: ScriptedResponse, requestBody: unknown): WireUsage | undefined {
  if (step.usage === false) return undefined
  if (step.usage) {
    const hit = step.usage.cacheHitTokens ?? 0
    return {
      prompt_tokens: step.usage.promptTokens,
      completion_tokens: step.usage.completionTokens,
      total_tokens: step.usage.totalTokens ?? step.usage.promptTokens + step.usage.completionTokens,
      prompt_cache_hit_tokens: hit,
      prompt_cache_miss_tokens: step.usage.cacheMissTokens ?? Math.max(0, step.usage.promptTokens - hit),
      ...(step.usage.reasoningTokens !== undefined
        ? { completion_tokens_details: { reasoning_tokens: step.usage.reasoningTokens } }
        : {}),
    }
  }
  const messages =
    typeof requestBody === 'object' && requestBody !== null && 'messages' in requestBody
      ? JSON.stringify(requestBody.messages ?? '')
      : ''
  const prompt = Math.ceil(messages.length / 4)
  const reasoning = Math.ceil((step.reasoning ?? '').length / 4)
  let produced = (step.text ?? '').length
  for (const call of step.toolCalls ?? []) produced += call.name.length + argumentsText(call.arguments).length
  const completion = Math.ceil(produced / 4) + reasoning
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_cache_hit_tokens: 0,
    prompt_cache_miss_tokens: prompt,
    ...(reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
  }
}

/** Facts shared by every chunk of one response. */
export interface ResponseIdentity {
  id: string
  model: string
  created: number
  /** Index of the request, used for default tool-call ids. */
  requestIndex: number
}

/** The tool-call id a step's call `index` gets. */
export function toolCallId(step: ScriptedResponse, index: number, identity: ResponseIdentity): string {
  return step.toolCalls?.[index]?.id ?? `call_${identity.requestIndex}_${index}`
}

/**
 * The data chunks of a streamed response in order, without the `[DONE]` marker: a role
 * chunk (carrying an empty `reasoning_content` when the step reasons), reasoning deltas,
 * text deltas, tool-call fragments, the finish chunk and, when `includeUsage`, a final
 * `choices: []` chunk with the usage.
 */
export function streamChunks(
  step: ScriptedResponse,
  identity: ResponseIdentity,
  includeUsage: boolean,
  requestBody: unknown,
): WireChunk[] {
  const chunks: WireChunk[] = []
  const chunk = (delta: Record<string, unknown>, finish: ScriptedFinishReason | null = null): WireChunk => ({
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    system_fingerprint: 'fp_scripted',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  })
  const reasoning = step.reasoning ?? ''
  const reasoningPieces = splitString(reasoning, step.chunking?.reasoning ?? defaultSizes.reasoning)
  const reasons = reasoningPieces.length > 0
  if (reasons && step.emptyFirstReasoning !== false) {
    chunks.push(chunk({ role: 'assistant', content: null, reasoning_content: '' }))
  } else {
    chunks.push(chunk({ role: 'assistant', content: '' }))
  }
  for (const piece of reasoningPieces) chunks.push(chunk({ content: null, reasoning_content: piece }))
  for (const piece of splitString(step.text ?? '', step.chunking?.text ?? defaultSizes.text)) {
    chunks.push(chunk(reasons ? { content: piece, reasoning_content: null } : { content: piece }))
  }
  for (const [index, call] of (step.toolCalls ?? []).entries()) {
    chunks.push(
      chunk({
        tool_calls: [
          {
            index,
            id: toolCallId(step, index, identity),
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    )
    for (const piece of splitString(
      argumentsText(call.arguments),
      step.chunking?.arguments ?? defaultSizes.arguments,
    )) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  }
  chunks.push(chunk({ content: '' }, finishReasonOf(step)))
  const usage = usageOf(step, requestBody)
  if (includeUsage && usage) {
    chunks.push({
      id: identity.id,
      object: 'chat.completion.chunk',
      created: identity.created,
      model: identity.model,
      system_fingerprint: 'fp_scripted',
      choices: [],
      usage,
    })
  }
  return chunks
}

/** The body of a non-streamed (`stream: false`) response. */
export function completionBody(step: ScriptedResponse, identity: ResponseIdentity, requestBody: unknown) {
  const calls = step.toolCalls ?? []
  const usage = usageOf(step, requestBody)
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    system_fingerprint: 'fp_scripted',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: step.text ?? '',
          ...(step.reasoning !== undefined ? { reasoning_content: step.reasoning } : {}),
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call, index) => ({
                  id: toolCallId(step, index, identity),
                  type: 'function',
                  function: { name: call.name, arguments: argumentsText(call.arguments) },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: finishReasonOf(step),
      },
    ],
    ...(usage ? { usage } : {}),
  }
}

/** An HTTP error a fault answers with: status, headers and an OpenAI-shaped error body. */
export interface HttpFault {
  status: number
  headers: Record<string, string>
  body: { error: { message: string; type: string; param: null; code: string | null } }
}

/** The HTTP error of a fault, or `undefined` for stream faults (`cut`, `malformed`, `stall`). */
export function httpFault(fault: ScriptedFault | undefined): HttpFault | undefined {
  if (!fault) return undefined
  const make = (
    status: number,
    message: string,
    type: string,
    code: string | null,
    retryAfter?: number | string,
  ): HttpFault => ({
    status,
    headers: retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {},
    body: { error: { message, type, param: null, code } },
  })
  switch (fault.type) {
    case 'http':
      return make(
        fault.status,
        fault.message ?? `Scripted HTTP ${fault.status} error.`,
        fault.errorType ?? (fault.status >= 500 ? 'server_error' : 'invalid_request_error'),
        fault.code ?? null,
        fault.retryAfter,
      )
    case 'rate-limit':
      return make(
        429,
        fault.message ?? 'Rate limit reached for requests. Please retry after a short wait.',
        'rate_limit_error',
        'rate_limit_exceeded',
        fault.retryAfter,
      )
    case 'server-error':
      return make(
        500,
        fault.message ?? 'The server had an error while processing your request.',
        'server_error',
        null,
      )
    case 'overloaded':
      return make(
        503,
        fault.message ?? 'The server is overloaded due to high traffic. Please retry later.',
        'server_error',
        null,
      )
    case 'context-length':
      return make(
        400,
        fault.message ??
          "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens " +
            '(132000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.',
        'invalid_request_error',
        'invalid_request_error',
      )
    case 'auth':
      return make(
        401,
        fault.message ?? 'Authentication Fails, Your api key: ****abcd is invalid',
        'authentication_error',
        'invalid_request_error',
      )
    case 'insufficient-balance':
      return make(402, fault.message ?? 'Insufficient Balance', 'unknown_error', 'invalid_request_error')
    case 'cut':
    case 'malformed':
    case 'stall':
      return undefined
  }
}

/**
 * The ids of assistant tool calls in a request body that no `tool` message answers before
 * the next non-tool message (DeepSeek answers such a request with HTTP 400).
 */
export function unansweredToolCallIds(body: { messages?: unknown }): string[] {
  const out: string[] = []
  let open: string[] = []
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : []
  for (const message of messages) {
    if (message?.role === 'tool') {
      open = open.filter((id) => id !== message.tool_call_id)
      continue
    }
    out.push(...open)
    open = []
    const calls = message?.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls : []
    for (const call of calls as Array<{ id?: unknown }>) if (typeof call?.id === 'string') open.push(call.id)
  }
  return [...out, ...open]
}
