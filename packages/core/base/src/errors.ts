/**
 * The base of every error Keel throws on purpose. `code` is stable and documented (tests
 * and callers branch on it, never on the message); `details` carries the structured facts
 * (event type, JSON path, file, line) the message was written from. Messages say what
 * went wrong, where, and what to do.
 */
export class KeelError<Code extends string = string> extends Error {
  readonly code: Code
  readonly details: Readonly<Record<string, unknown>>

  constructor(
    code: Code,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = new.target.name
    this.code = code
    this.details = Object.freeze({ ...details })
  }
}

/** True when `error` is a {@link KeelError}, optionally with the given code. */
export function isKeelError<Code extends string>(error: unknown, code?: Code): error is KeelError<Code> {
  return error instanceof KeelError && (code === undefined || error.code === code)
}

/** The message of anything thrown: an `Error`'s message, else its string form. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * A thrown value as a plain `{ code, message }` record (what events and results carry): a
 * {@link KeelError}'s own code, else `fallback`.
 */
export function errorRecordOf(error: unknown, fallback: string): { code: string; message: string } {
  return { code: isKeelError(error) ? error.code : fallback, message: errorMessage(error) }
}
