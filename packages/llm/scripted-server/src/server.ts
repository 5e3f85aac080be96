import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { errorMessage } from '@keel/base'
import { stall, watchClose, write } from './connection.js'
import { contextOverflowMessage, PromptCache, withCacheHits } from './prompt.js'
import {
  completionBody,
  httpFault,
  type ResponseIdentity,
  streamChunks,
  unansweredToolCallIds,
  type WireUsage,
} from './protocol.js'
import type { RecordedChatBody, RecordedRequest } from './recording.js'
import { parseScriptedResponse, type ScriptedResponse, ScriptValidationError } from './script.js'

export type { RecordedChatBody, RecordedMessage, RecordedRequest, RequestOutcome } from './recording.js'

/** Computes a response for a request when the queue is empty (dynamic scripts). */
export type ScriptHandler = (request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  /** Responses consumed one per chat request, in order. */
  script?: readonly ScriptedResponse[]
  /** Answers chat requests once the queue is empty. */
  handler?: ScriptHandler
  /** Defaults to 127.0.0.1. */
  host?: string
  /** Defaults to 0 (a free port). */
  port?: number
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 (no step consumed). */
  apiKey?: string
  /**
   * As DeepSeek does, a request in which an assistant tool call has no tool message
   * answering it gets HTTP 400 (no step consumed). Default true; false accepts it.
   */
  requireToolAnswers?: boolean
  /**
   * The model's context window in tokens: a request whose prompt (tool schemas and
   * messages, 4 characters a token) plus its `max_tokens` is longer gets DeepSeek's HTTP
   * 400 "maximum context length" error (no step consumed). Default: no limit.
   */
  contextWindow?: number
  /**
   * Simulates DeepSeek's prefix cache: usage reports `prompt_cache_hit_tokens` for the
   * leading 64-token blocks of the prompt (per model: tool schemas, then messages) that an
   * earlier request already sent, unless a step scripts its own `cacheHitTokens`; a step
   * without scripted usage then counts the tool schemas in `prompt_tokens` too. Default off.
   */
  promptCache?: boolean
}

/** A running scripted chat-completions server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`; chat endpoint at `/chat/completions` and `/v1/chat/completions`. */
  readonly url: string
  /** `<url>/v1`, ready for an OpenAI-style client's `baseURL`. */
  readonly baseURL: string
  /** Every request received, in arrival order (chat or not). */
  readonly requests: readonly RecordedRequest[]
  /** The most recent request, if any. */
  readonly lastRequest: RecordedRequest | undefined
  /** How many queued responses are left. */
  readonly pending: number
  /** Problems the server met (script exhausted, handler failures, bad requests), in order. */
  readonly problems: readonly string[]
  /** Validates and queues responses; throws {@link ScriptValidationError} naming a bad step. */
  enqueue(...responses: ScriptedResponse[]): void
  /** Resolves once every response in flight is finished (completed, cut or closed by the client). */
  settled(): Promise<void>
  /** Closes every connection and the server. */
  close(): Promise<void>
}

const chatPaths = new Set(['/chat/completions', '/v1/chat/completions'])

/**
 * Starts a scripted OpenAI-compatible chat-completions server on 127.0.0.1. The script is
 * validated up front: a bad step throws {@link ScriptValidationError} before the server
 * starts.
 */
export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const queue: ScriptedResponse[] = []
  const requests: RecordedRequest[] = []
  const problems: string[] = []
  const inFlight = new Set<Promise<void>>()
  const cache = options.promptCache ? new PromptCache() : undefined
  let stepsEnqueued = 0

  const enqueue = (...responses: ScriptedResponse[]): void => {
    // Validate all first: a bad step leaves the queue untouched.
    const parsed = responses.map((response, i) => parseScriptedResponse(response, stepsEnqueued + i))
    stepsEnqueued += parsed.length
    queue.push(...parsed)
  }
  enqueue(...(options.script ?? []))

  const server = createServer((req, res) => {
    const task = handle(req, res).catch((error: unknown) => {
      problems.push(`internal error: ${errorMessage(error)}`)
      if (!res.headersSent)
        sendJson(res, 500, errorBody(`scripted server internal error: ${String(error)}`, 'server_error'))
      else res.destroy()
    })
    inFlight.add(task)
    void task.finally(() => inFlight.delete(task))
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req)
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path,
      headers: headersOf(req),
      body: parseJson(rawBody),
      rawBody,
      receivedAt: Date.now(),
      chunksSent: 0,
      outcome: 'pending',
    }
    requests.push(record)
    const reject = (status: number, message: string, type: string): void => {
      problems.push(`request #${record.index} ${record.method} ${path}: ${message}`)
      record.outcome = 'rejected'
      sendJson(res, status, errorBody(message, type))
    }

    if (record.method !== 'POST' || !chatPaths.has(path)) {
      return reject(404, `no route for ${record.method} ${path}; use POST /chat/completions`, 'not_found')
    }
    if (options.apiKey !== undefined && record.headers.authorization !== `Bearer ${options.apiKey}`) {
      return reject(401, 'Authentication Fails, your api key is invalid', 'authentication_error')
    }
    if (record.body === undefined) {
      return reject(400, 'the request body is not a JSON object', 'invalid_request_error')
    }
    const unanswered = options.requireToolAnswers === false ? [] : unansweredToolCallIds(record.body)
    if (unanswered.length > 0) {
      return reject(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${unanswered.join(', ')}`,
        'invalid_request_error',
      )
    }

    const overflow =
      options.contextWindow === undefined ? null : contextOverflowMessage(record.body, options.contextWindow)
    if (overflow !== null) {
      record.outcome = 'http-error'
      return sendJson(res, 400, errorBody(overflow, 'invalid_request_error'))
    }

    let step = queue.shift()
    if (step === undefined && options.handler) {
      try {
        step = parseScriptedResponse(
          await options.handler(record),
          record.index,
          'handler result for request',
        )
      } catch (error) {
        const message =
          error instanceof ScriptValidationError
            ? error.message
            : `the script handler threw: ${errorMessage(error)}`
        return reject(500, message, 'script_error')
      }
    }
    if (step === undefined) {
      return reject(
        500,
        `script exhausted: no scripted response left for request #${record.index} ` +
          `(${stepsEnqueued} step(s) were enqueued); enqueue more responses or pass a handler`,
        'script_exhausted',
      )
    }
    record.response = step
    const cached = cache?.lookup(record.body)
    const scripted = step.usage
    const usageOf = (usage: WireUsage): WireUsage =>
      cached === undefined || scripted === false ? usage : withCacheHits(usage, cached, scripted)

    const connection = watchClose(res)
    if (step.headersDelayMs) await connection.wait(step.headersDelayMs)
    if (connection.closed) {
      record.outcome = 'client-closed'
      return
    }

    const fault = httpFault(step.fault)
    if (fault) {
      record.outcome = 'http-error'
      sendJson(res, fault.status, fault.body, fault.headers)
      return
    }

    const identity: ResponseIdentity = {
      id: step.id ?? `chatcmpl-scripted-${record.index}`,
      model: step.model ?? (typeof record.body.model === 'string' ? record.body.model : 'scripted-model'),
      created: Math.floor(record.receivedAt / 1000),
      requestIndex: record.index,
    }

    if (record.body.stream !== true) {
      const completion = completionBody(step, identity, record.body)
      const body = JSON.stringify(
        completion.usage ? { ...completion, usage: usageOf(completion.usage) } : completion,
      )
      if (step.fault?.type === 'malformed') {
        sendRaw(res, 200, step.fault.line ?? '{"id": "broken', 'application/json')
        record.outcome = 'completed'
      } else if (step.fault?.type === 'cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
        await write(res, body.slice(0, Math.floor(body.length / 2)))
        res.destroy()
        record.outcome = 'cut'
      } else {
        sendRaw(res, 200, body, 'application/json')
        record.outcome = 'completed'
      }
      return
    }

    const chunks = streamChunks(
      step,
      identity,
      record.body.stream_options?.include_usage === true,
      record.body,
    ).map((c) => (c.usage ? { ...c, usage: usageOf(c.usage) } : c))
    const cutAt =
      step.fault?.type === 'cut' ? (step.fault.afterChunks ?? Math.floor(chunks.length / 2)) : undefined
    const malformedAt = step.fault?.type === 'malformed' ? (step.fault.afterChunks ?? 1) : undefined
    const malformedLine = step.fault?.type === 'malformed' ? (step.fault.line ?? '{"id": "broken') : ''
    const keepAlive = ': keep-alive\n\n'.repeat(step.keepAlive ?? 0)
    const stallAt = step.fault?.type === 'stall' ? (step.fault.afterChunks ?? 1) : undefined

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    })
    res.flushHeaders()
    for (let i = 0; i <= chunks.length; i++) {
      if (i === malformedAt) await write(res, `data: ${malformedLine}\n\n`)
      if (i === stallAt && step.fault?.type === 'stall') await stall(res, connection, step.fault)
      if (i === cutAt) {
        if (step.fault?.type === 'cut' && step.fault.graceful) res.end()
        else res.destroy()
        record.outcome = 'cut'
        return
      }
      if (i === chunks.length) break
      if (i > 0 && step.delayMs) await connection.wait(step.delayMs)
      if (connection.closed) {
        record.outcome = 'client-closed'
        return
      }
      await write(res, `${keepAlive}data: ${JSON.stringify(chunks[i])}\n\n`)
      if (connection.closed) {
        record.outcome = 'client-closed'
        return
      }
      record.chunksSent++
    }
    await write(res, 'data: [DONE]\n\n')
    res.end()
    record.outcome = 'completed'
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  const url = `http://${host}:${address.port}`

  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    get lastRequest() {
      return requests.at(-1)
    },
    get pending() {
      return queue.length
    },
    problems,
    enqueue,
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await Promise.allSettled([...inFlight])
    },
  }
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

function parseJson(raw: string): RecordedChatBody | undefined {
  try {
    const value: unknown = JSON.parse(raw)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as RecordedChatBody)
      : undefined
  } catch {
    return undefined
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    req.on('data', (part: Buffer) => parts.push(part))
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    req.on('error', reject)
  })
}

function errorBody(message: string, type: string) {
  return { error: { message, type, param: null, code: null } }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendRaw(res, status, JSON.stringify(body), 'application/json', headers)
}

function sendRaw(
  res: ServerResponse,
  status: number,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    ...headers,
  })
  res.end(body)
}
