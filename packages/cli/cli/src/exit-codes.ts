/** Exit codes of `keel` (documented in the README). */
export const EXIT = { ok: 0, runtime: 1, usage: 2, hangup: 129, interrupted: 130, terminated: 143 } as const

/** The signal that stopped a run, as an abort reason. */
export interface Interrupt {
  readonly signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP'
}

/** The signal that aborted `signal` (SIGINT when the abort gave no {@link Interrupt}), if it was aborted. */
export function interruptSignal(signal: AbortSignal | undefined): Interrupt['signal'] | undefined {
  if (!signal?.aborted) return undefined
  const name = (signal.reason as Partial<Interrupt> | undefined)?.signal
  return name === 'SIGTERM' || name === 'SIGHUP' ? name : 'SIGINT'
}

/** The exit code of a run stopped by `signal` (`128 + n`: 129 SIGHUP, 130 SIGINT, 143 SIGTERM). */
export function interruptExitCode(signal: AbortSignal | undefined): number | undefined {
  const name = interruptSignal(signal)
  if (name === undefined) return undefined
  return name === 'SIGTERM' ? EXIT.terminated : name === 'SIGHUP' ? EXIT.hangup : EXIT.interrupted
}
