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
      value: () => new WatchedBody(body.getReader(), watch, idleMs),
    })
    watches.set(response, watch)
    return response
  }
}

const utf8 = new TextDecoder()

/**
 * Reads `reader` chunk by chunk for the client, keeping the last {@link TAIL} bytes; at the
 * end, records in `watch` whether they hold the `[DONE]` marker. A read that waits longer
 * than `idleMs` rejects with {@link StreamIdleTimeoutError} and cancels the body.
 *
 * Lean on purpose (it runs for every chunk of every stream): no closure per stream or read;
 * one idle timer per stream, not one per read — a read notes when it started, and the timer,
 * when it fires, re-arms itself for what is left of the wait of the read in flight; an idle
 * stream is cancelled, which ends the waiting read, and that read then rejects. A stream read
 * to its end keeps its lock (releasing it costs more than the rest of the watch; nothing
 * reads the body after it). No listener on the request's abort signal: an abort errors the
 * body, so the read in flight rejects and ends the watch, timer and all; with no read in
 * flight the timer, unreferenced, finds none waiting and stops.
 */
class WatchedBody implements AsyncIterableIterator<Uint8Array> {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>
  readonly #watch: { done: boolean }
  readonly #idleMs: number | undefined
  readonly #tail = new Uint8Array(TAIL)
  /** How many bytes of {@link #tail} hold the end of the stream. */
  #kept = 0
  #finished = false
  /** When the read in flight started (`performance.now()`); -1 while none waits. */
  #readingSince = -1
  #idled: StreamIdleTimeoutError | undefined
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    watch: { done: boolean },
    idleMs: number | undefined,
  ) {
    this.#reader = reader
    this.#watch = watch
    this.#idleMs = idleMs
  }

  async next(): Promise<IteratorResult<Uint8Array>> {
    const idleMs = this.#idleMs
    if (idleMs !== undefined && !this.#finished) {
      this.#readingSince = performance.now()
      if (this.#timer === undefined) this.#arm(idleMs)
    }
    let result: ReadResult
    try {
      result = await this.#reader.read()
    } catch (error) {
      this.#readingSince = -1
      this.#finish()
      this.#reader.releaseLock()
      throw this.#idled ?? error
    }
    this.#readingSince = -1
    if (this.#idled !== undefined) {
      this.#reader.releaseLock()
      throw this.#idled
    }
    if (result.done) {
      this.#finish()
      this.#watch.done = doneLine.test(`\n${utf8.decode(this.#tail.subarray(0, this.#kept))}`)
      return { done: true, value: undefined }
    }
    this.#keep(result.value)
    return { done: false, value: result.value }
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.#finish()
    const cancelled = this.#reader.cancel()
    this.#reader.releaseLock()
    await cancelled
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    return this
  }

  #finish(): void {
    this.#finished = true
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Keeps the last {@link TAIL} bytes read, in one buffer per stream (nothing allocated per chunk). */
  #keep(chunk: Uint8Array): void {
    const tail = this.#tail
    const n = chunk.length
    if (n >= TAIL) {
      for (let i = 0, from = n - TAIL; i < TAIL; i++) tail[i] = chunk[from + i]!
      this.#kept = TAIL
      return
    }
    // keep the newest of what was kept, then the chunk after it
    const keep = Math.min(this.#kept, TAIL - n)
    if (keep > 0 && keep < this.#kept) tail.copyWithin(0, this.#kept - keep, this.#kept)
    for (let i = 0; i < n; i++) tail[keep + i] = chunk[i]!
    this.#kept = keep + n
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#onTimer(), ms)
    this.#timer.unref?.()
  }

  #onTimer(): void {
    this.#timer = undefined
    const idle = this.#idleMs!
    if (this.#finished || this.#readingSince < 0) return // no read waits: the next one arms the timer
    const waited = performance.now() - this.#readingSince
    if (waited < idle) {
      this.#arm(idle - waited)
      return
    }
    this.#finish()
    const idled = new StreamIdleTimeoutError(idle)
    this.#idled = idled
    // Cancelling ends the waiting read (done), which `next` turns into the idle error.
    // The body is given up: a failure to cancel it leaves nothing more to report.
    void this.#reader.cancel(idled).catch(() => {})
  }
}

/** Whether the SSE `response` ended with `data: [DONE]`; `undefined` when it was not watched. */
export function sawDone(response: Response): boolean | undefined {
  return watches.get(response)?.done
}
