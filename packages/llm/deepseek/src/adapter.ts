import type { LlmAdapter, LlmChunk, LlmRequest, StreamRecord } from '@keel/llm'
import { findUnansweredToolCalls, LlmError } from '@keel/llm'
import OpenAI from 'openai'
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions'
import { StreamAssembly, type WireChunk } from './assembly.js'
import { type ModelCapabilities, resolveCapabilities } from './capabilities.js'
import { classifyError } from './errors.js'
import { buildRequestBody } from './mapping.js'
import { type DeepSeekOptions, type ResolvedOptions, resolveOptions } from './options.js'
import { SseChunks } from './sse.js'

/**
 * The DeepSeek {@link LlmAdapter}: streams chat completions through the official `openai`
 * client from `baseURL` (DeepSeek by default, any OpenAI-compatible endpoint otherwise).
 * The client never retries (`maxRetries: 0`): retries belong to the agent loop, which logs
 * each one as an event.
 */
export class DeepSeekAdapter implements LlmAdapter {
  readonly provider: string
  readonly model: string
  readonly baseURL: string
  /** {@link baseURL} without any user name or password in it. */
  readonly endpoint: string
  readonly #options: ResolvedOptions
  readonly #client: OpenAI

  /** Throws {@link DeepSeekConfigError} for bad options or a missing API key. */
  constructor(options: DeepSeekOptions = {}) {
    this.#options = resolveOptions(options)
    this.provider = this.#options.provider
    this.model = this.#options.model
    this.baseURL = this.#options.baseURL
    this.endpoint = withoutCredentials(this.baseURL)
    this.#client = new OpenAI({
      apiKey: this.#options.apiKey,
      baseURL: this.#options.baseURL,
      maxRetries: 0,
      timeout: this.#options.timeoutMs,
      defaultHeaders: this.#options.headers,
      logLevel: 'off',
    })
  }

  /** The capabilities of `model` (the adapter's default model when absent). */
  capabilities(model: string = this.model): ModelCapabilities {
    return resolveCapabilities(model, this.#options.capabilities)
  }

  /** Streams one call. Throws {@link LlmError}: before the first chunk or during the stream. */
  stream(request: LlmRequest): AsyncIterable<LlmChunk> {
    return this.#run(request)
  }

  async *#run(request: LlmRequest): AsyncGenerator<LlmChunk, void, undefined> {
    const model = request.model ?? this.model
    const where = `${this.provider} (${this.baseURL}, model ${model})`
    const startedAt = Date.now()
    const assembly = new StreamAssembly()
    const record = (): StreamRecord => ({
      provider: this.provider,
      model,
      ...(assembly.responseId !== undefined ? { responseId: assembly.responseId } : {}),
      startedAt,
      ...(assembly.firstContentAt !== undefined ? { firstChunkAt: assembly.firstContentAt } : {}),
      endedAt: Date.now(),
      ...(assembly.finishReason !== undefined ? { finishReason: assembly.finishReason } : {}),
      chunks: assembly.chunks,
    })
    const failure = (error: unknown, phase: 'request' | 'stream') => {
      const { finishReason: _unfinished, ...facts } = record()
      return classifyError(error, {
        phase,
        where,
        timeoutMs: this.#options.timeoutMs,
        ...(request.signal ? { signal: request.signal } : {}),
        ...(assembly.delivered ? { partial: assembly.partial() } : {}),
        record: facts,
      })
    }

    const unanswered = findUnansweredToolCalls(request.messages)
    if (unanswered.length > 0) {
      throw new LlmError(
        'unanswered-tool-call',
        `Refusing to call ${where}: tool call(s) ${unanswered
          .map((c) => `'${c.id}' (${c.name}, message ${c.messageIndex})`)
          .join(', ')} have no tool result; the provider would reject the request with HTTP 400. ` +
          'Answer every tool call (the session store does this when it reopens an interrupted session).',
      )
    }
    const body = buildRequestBody(request, {
      model,
      images: this.#options.images,
      extraBody: this.#options.extraBody,
    })
    // The client sends the request and turns every HTTP failure into its typed errors; the
    // body is read by SseChunks (the client's own stream would hide the closing marker).
    let chunks: SseChunks
    try {
      const response = await this.#client.chat.completions
        .create(
          body as unknown as ChatCompletionCreateParamsStreaming,
          request.signal ? { signal: request.signal } : {},
        )
        .asResponse()
      if (response.body === null) throw new Error('the response has no body')
      chunks = new SseChunks(response.body, response.headers, this.#options.idleTimeoutMs)
    } catch (error) {
      throw failure(error, 'request')
    }

    let finished = false
    try {
      for (;;) {
        let next: IteratorResult<unknown>
        try {
          next = await chunks.next()
        } catch (error) {
          throw failure(error, 'stream')
        }
        if (next.done) break
        // a loop, not `yield*`: delegating to an array from an async generator wraps it in an
        // async-from-sync iterator, one more promise per chunk delivered
        for (const chunk of assembly.accept(next.value as WireChunk)) yield chunk
      }
      // An abort between two reads may end the body quietly.
      if (request.signal?.aborted) throw failure(request.signal.reason, 'stream')
      if (assembly.finishReason === undefined) {
        throw failure(new Error('the stream ended without a finish reason'), 'stream')
      }
      // A finish reason without the closing marker: the server stopped early (usage may be missing).
      if (!chunks.done) {
        throw failure(new Error('the stream ended without data: [DONE]'), 'stream')
      }
      if (assembly.finishReason === 'insufficient-resources') {
        throw new LlmError(
          'insufficient-resources',
          `${where} stopped the answer: insufficient system resources (finish_reason insufficient_system_resource); retry later.`,
          { ...(assembly.delivered ? { partial: assembly.partial() } : {}), record: record() },
        )
      }
      let message: ReturnType<StreamAssembly['message']>
      try {
        message = assembly.message()
      } catch (error) {
        if (error instanceof LlmError) {
          throw new LlmError(error.kind, `${where}: ${error.message}`, {
            ...(error.partial ? { partial: error.partial } : {}),
            record: record(),
          })
        }
        throw error
      }
      finished = true
      yield {
        type: 'finish',
        reason: assembly.finishReason,
        message,
        ...(assembly.usage ? { usage: assembly.usage } : {}),
        record: record(),
      }
    } finally {
      // A consumer that stops early (break, return, throw) must not leave the HTTP stream open.
      // Cancelling the body closes it; a failure to cancel leaves nothing more to report.
      if (!finished) void chunks.return().catch(() => {})
    }
  }
}

function withoutCredentials(url: string): string {
  const parsed = new URL(url)
  if (parsed.username === '' && parsed.password === '') return url
  parsed.username = ''
  parsed.password = ''
  return parsed.toString()
}

/** Builds a {@link DeepSeekAdapter}; see {@link DeepSeekOptions}. */
export function createDeepSeekAdapter(options: DeepSeekOptions = {}): DeepSeekAdapter {
  return new DeepSeekAdapter(options)
}
