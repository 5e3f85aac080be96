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
 * was cut (DeepSeek protocol). This `fetch` wrapper passes SSE bodies through unchanged,
 * keeping only their last bytes, and checks at the end whether the marker closed the stream.
 * It also enforces the per-stream idle timeout: every byte (keep-alive comments included)
 * restarts the timer, and a body silent for `idleTimeoutMs` is errored, which cancels the
 * socket read.
 */
const watches = new WeakMap<Response, { done: boolean }>()

const TAIL = 64
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
    let tail = new Uint8Array(0)
    const idleMs = options.idleTimeoutMs
    let restart: () => void = () => {}
    let timer: ReturnType<typeof setTimeout> | undefined
    let ended = false
    const stop = (): void => {
      ended = true
      if (timer !== undefined) clearTimeout(timer)
      init?.signal?.removeEventListener('abort', stop)
    }
    init?.signal?.addEventListener('abort', stop, { once: true })
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        start(controller) {
          if (idleMs === undefined) return
          const arm = (): void => {
            if (ended) return
            timer = setTimeout(() => {
              stop()
              controller.error(new StreamIdleTimeoutError(idleMs))
            }, idleMs)
            timer.unref?.()
          }
          restart = () => {
            if (timer !== undefined) clearTimeout(timer)
            arm()
          }
          arm()
        },
        transform(chunk, controller) {
          restart()
          if (chunk.length >= TAIL) {
            tail = chunk.slice(chunk.length - TAIL)
          } else {
            const joined = new Uint8Array(Math.min(TAIL, tail.length + chunk.length))
            const keep = joined.length - chunk.length
            joined.set(tail.subarray(tail.length - keep), 0)
            joined.set(chunk, keep)
            tail = joined
          }
          controller.enqueue(chunk)
        },
        flush() {
          stop()
          watch.done = doneLine.test(`\n${new TextDecoder().decode(tail)}`)
        },
      }),
    )
    const wrapped = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
    watches.set(wrapped, watch)
    return wrapped
  }
}

/** Whether the SSE `response` ended with `data: [DONE]`; `undefined` when it was not watched. */
export function sawDone(response: Response): boolean | undefined {
  return watches.get(response)?.done
}
