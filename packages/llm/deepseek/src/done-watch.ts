/**
 * The `openai` client swallows the `data: [DONE]` marker, yet a stream that ends without it
 * was cut (DeepSeek protocol). This `fetch` wrapper passes SSE bodies through unchanged,
 * keeping only their last bytes, and checks at the end whether the marker closed the stream.
 */
const watches = new WeakMap<Response, { done: boolean }>()

const TAIL = 64
const doneLine = /(?:^|[\r\n])data: ?\[DONE\]/

/** A `fetch` that records, per SSE response, whether it ended with `data: [DONE]`. */
export function createWatchingFetch(base: typeof fetch = globalThis.fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init)
    const type = response.headers.get('content-type') ?? ''
    if (!response.body || !type.includes('text/event-stream')) return response
    const watch = { done: false }
    let tail = new Uint8Array(0)
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
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
