/** Exit codes of `keel` (documented in the README). */
export const EXIT = { ok: 0, runtime: 1, usage: 2, hangup: 129, interrupted: 130, terminated: 143 } as const

/** The signal that stopped a run, as an abort reason. */
export interface Interrupt {
  readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP'
}

/** The exit code of a run stopped by `signal` (`128 + n`: 129 SIGHUP, 130 SIGINT, 143 SIGTERM). */
export function interruptExitCode(signal: AbortSignal | undefined): number | undefined {
  if (!signal?.aborted) return undefined
  const name = (signal.reason as Partial<Interrupt> | undefined)?.signal
  return name === 'SIGTERM' ? EXIT.terminated : name === 'SIGHUP' ? EXIT.hangup : EXIT.interrupted
}
