import type { ServerResponse } from 'node:http'

/** Writes `data`; resolves once it is flushed (at once when the response is gone). */
export function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve()
    res.write(data, () => resolve())
  })
}

/** Tracks whether the client went away; `wait` sleeps but wakes early when it does. */
export function watchClose(res: ServerResponse) {
  const state = { closed: res.destroyed }
  let wake: () => void = () => {}
  res.on('close', () => {
    if (!res.writableFinished) state.closed = true
    wake()
  })
  return {
    get closed() {
      return state.closed
    },
    wait(ms: number): Promise<void> {
      if (state.closed) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          wake = () => {}
          resolve()
        }
        wake = done
      })
    },
  }
}

/** A response's close watcher. */
export type Connection = ReturnType<typeof watchClose>

/** Sends nothing (or only keep-alive comments) for `forMs`, or until the client goes away. */
export async function stall(
  res: ServerResponse,
  connection: Connection,
  fault: { keepAliveMs?: number; forMs?: number },
): Promise<void> {
  const until = fault.forMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + fault.forMs
  while (!connection.closed && Date.now() < until) {
    const left = until - Date.now()
    const wait = Math.min(fault.keepAliveMs ?? 60_000, left)
    await connection.wait(wait)
    if (fault.keepAliveMs !== undefined && !connection.closed && Date.now() < until) {
      await write(res, ': keep-alive\n\n')
    }
  }
}
