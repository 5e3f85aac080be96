// Shared pieces of the benchmarks that build sessions from realistic events.
import type { SessionEventMap, SessionEventType } from '@keel/session'

/** One `Session.append(type, data)` call, typed by event type. */
export type Op = { [K in SessionEventType]: [K, SessionEventMap[K]] }[SessionEventType]

/** `n` characters of plausible tool output, varied by `seed`. */
export function filler(n: number, seed: number | string): string {
  let s = ''
  while (s.length < n) s += `line ${seed} of output: the quick brown fox jumps over the lazy dog; `
  return s.slice(0, n)
}

/** The stream record of a benchmark's assistant messages. */
export const stream = {
  provider: 'bench',
  model: 'm',
  startedAt: 1,
  endedAt: 2,
  chunks: 3,
  finishReason: 'stop' as const,
}
