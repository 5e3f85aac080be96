import type { Clock } from './plugin.js'

/** How the agent retries a model call that failed with a retryable error. */
export interface RetryOptions {
  /** Retries after the first attempt (0 disables retrying). */
  maxRetries: number
  /** The first retry waits about this long; each next one doubles it. */
  baseDelayMs: number
  /** Backoff never exceeds this (a server's `Retry-After` may ask for longer, up to `maxRetryAfterMs`). */
  maxDelayMs: number
  /**
   * The longest server-requested wait (`Retry-After`) honoured, in milliseconds: a longer
   * request is cut to this (the next attempt may then be refused again and count as a
   * retry). Default 60 s.
   */
  maxRetryAfterMs: number
}

/** Defaults: 3 retries, 500 ms doubling up to 30 s; `Retry-After` honoured up to 60 s. */
export const defaultRetryOptions: RetryOptions = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
}

/** The wall clock and Node timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/**
 * The wait before retry number `attempt` (1 for the first retry): exponential backoff
 * `baseDelayMs · 2^(attempt−1)` capped at `maxDelayMs`, with "equal jitter" (half fixed,
 * half uniformly random, so concurrent clients spread out but never retry instantly). A
 * server-requested `retryAfterMs` is a floor, capped at `maxRetryAfterMs`: the wait is
 * never shorter than the server asked, unless it asked for more than the cap.
 */
export function backoffDelay(
  attempt: number,
  options: Omit<RetryOptions, 'maxRetryAfterMs'> & { maxRetryAfterMs?: number },
  random: () => number,
  retryAfterMs?: number,
): number {
  const exponential = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1))
  const jittered = exponential / 2 + random() * (exponential / 2)
  const asked = Math.min(retryAfterMs ?? 0, options.maxRetryAfterMs ?? Number.POSITIVE_INFINITY)
  const delay = Math.max(Math.round(jittered), asked)
  return Math.max(0, Math.round(delay))
}

/** Waits `ms` on `clock`; resolves early (with false) when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle)
      resolve(false)
    }
    const handle = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
