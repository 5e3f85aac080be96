/**
 * The stream sent no byte (data or keep-alive comment) for `idleTimeoutMs`: the watching
 * fetch errors the body with this, which the adapter reports as a retryable `stream-idle`.
 */
export class StreamIdleTimeoutError extends Error {
  readonly idleTimeoutMs: number
  constructor(idleTimeoutMs: number) {
    super(`no byte arrived for ${idleTimeoutMs} ms`)
    this.name = 'StreamIdleTimeoutError'
    this.idleTimeoutMs = idleTimeoutMs
  }
}

/** Options of {@link createWatchingFetch}. */
export interface WatchOptions {
  /** Errors an SSE body with {@link StreamIdleTimeoutError} after this long without a byte. */
  idleTimeoutMs?: number
}

/**
 * The `openai` client swallows the `data: [DONE]` marker, yet a stream that ends without it
 * was cut (DeepSeek protocol). This `fetch` wrapper watches SSE bodies as the client reads
 * them, keeping only their last bytes, and checks at the end whether the marker closed the
 * stream. It also enforces the per-stream idle timeout: every byte (keep-alive comments
 * included) restarts the timer, and a body silent for `idleTimeoutMs` is errored, which
 * cancels the socket read.
 *
 * The client reads a body through its async iterator (`for await … of response.body`), so
 * the watch is that iterator, set on the body itself: no second stream, no `TransformStream`
 * pipe and no second `Response` per call — under load those cost a third of what the agent
 * loop adds to a model call.
 */
const watches = new WeakMap<Response, { done: boolean }>()

const TAIL = 64

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>
const doneLine = /(?:^|[\r\n])data: ?\[DONE\]/

/** A `fetch` that records, per SSE response, whether it ended with `data: [DONE]`. */
export function createWatchingFetch(
  base: typeof fetch = globalThis.fetch,
  options: WatchOptions = {},
): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init)
    const type = response.headers.get('content-type') ?? ''
    if (!response.body || !type.includes('text/event-stream')) return response
    const watch = { done: false }
    const body = response.body
    const idleMs = options.idleTimeoutMs
    Object.defineProperty(body, Symbol.asyncIterator, {
      configurable: true,
      value: () => watchingIterator(body.getReader(), watch, idleMs, init?.signal ?? undefined),
    })
    watches.set(response, watch)
    return response
  }
}

/**
 * Reads `reader` chunk by chunk for the client, keeping the last {@link TAIL} bytes; at the
 * end, records in `watch` whether they hold the `[DONE]` marker. A read that waits longer
 * than `idleMs` rejects with {@link StreamIdleTimeoutError} and cancels the body.
 */
function watchingIterator(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  watch: { done: boolean },
  idleMs: number | undefined,
  signal: AbortSignal | undefined,
): AsyncIterableIterator<Uint8Array> {
  let tail = new Uint8Array(0)
  let finished = false
  const finish = (): void => {
    finished = true
    signal?.removeEventListener('abort', finish)
  }
  signal?.addEventListener('abort', finish, { once: true })
  const keep = (chunk: Uint8Array): void => {
    if (chunk.length >= TAIL) {
      tail = chunk.slice(chunk.length - TAIL)
      return
    }
    const joined = new Uint8Array(Math.min(TAIL, tail.length + chunk.length))
    const kept = joined.length - chunk.length
    joined.set(tail.subarray(tail.length - kept), 0)
    joined.set(chunk, kept)
    tail = joined
  }
  const read = (): Promise<ReadResult> => {
    if (idleMs === undefined || finished) return reader.read()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        finish()
        const error = new StreamIdleTimeoutError(idleMs)
        reject(error)
        void reader.cancel(error).catch(() => {})
      }, idleMs)
      timer.unref?.()
      reader.read().then(
        (result) => {
          clearTimeout(timer)
          resolve(result)
        },
        (error: unknown) => {
          clearTimeout(timer)
          reject(error)
        },
      )
    })
  }
  const iterator: AsyncIterableIterator<Uint8Array> = {
    async next() {
      let result: ReadResult
      try {
        result = await read()
      } catch (error) {
        finish()
        reader.releaseLock()
        throw error
      }
      if (result.done) {
        finish()
        watch.done = doneLine.test(`\n${new TextDecoder().decode(tail)}`)
        reader.releaseLock()
        return { done: true, value: undefined }
      }
      keep(result.value)
      return { done: false, value: result.value }
    },
    async return() {
      finish()
      const cancelled = reader.cancel()
      reader.releaseLock()
      await cancelled
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]() {
      return iterator
    },
  }
  return iterator
}

/** Whether the SSE `response` ended with `data: [DONE]`; `undefined` when it was not watched. */
export function sawDone(response: Response): boolean | undefined {
  return watches.get(response)?.done
}
