import type { ToolCallBlock } from '@keel/llm'
import type { SessionEvent } from '@keel/session'
import { oneLine } from './render.js'

/** What a call was about, for a person: the command line, else the path, else the tool. */
export function callSubject(call: ToolCallBlock): string {
  try {
    const input = JSON.parse(call.arguments) as Record<string, unknown>
    if (typeof input.command === 'string') return `\`${oneLine(input.command, 80)}\``
    if (typeof input.path === 'string') return `${call.name} on ${oneLine(input.path, 80)}`
  } catch {
    // arguments that are not JSON: the tool's name says enough
  }
  return call.name
}

/** Whether a finished call reads as a refusal (refused, or interrupted) rather than as a result. */
export const isRefusal = (refusedBy: string | undefined, errorCode: string | undefined): boolean =>
  refusedBy !== undefined || errorCode === 'TOOL_ABORTED'

/**
 * The words of a person's rejections by the call they were about, folded from the
 * `approval/asked` (question → call) and `approval/decided` events it is shown.
 */
export class Rejections {
  readonly #asked = new Map<string, string>()
  readonly #words = new Map<string, string>()

  see(event: SessionEvent): void {
    if (event.type === 'approval/asked') this.#asked.set(event.data.id, event.data.callId)
    else if (event.type === 'approval/decided' && event.data.outcome === 'rejected' && event.data.reason) {
      const callId = this.#asked.get(event.data.id)
      if (callId !== undefined) this.#words.set(callId, event.data.reason)
    }
  }

  /** What the person said when rejecting `callId`, if they did. */
  of(callId: string): string | undefined {
    return this.#words.get(callId)
  }
}

/** A result the harness wrote for a call it did not run (`Error [CODE]: <tool> was not run: …`). */
const NOT_RUN = /^(?:Error \[[A-Z0-9_]+\]:\s*)?\S+ was not run:/u

/** The reason after `Error [CODE]: <tool> was not run: ` (and a `denied by plugin '…': ` prefix). */
function why(text: string): string {
  return oneLine(
    text
      .replace(/^Error \[[A-Z0-9_]+\]:\s*/u, '')
      .replace(/^\S+ was not run:\s*/u, '')
      .replace(/^denied by plugin '[^']*':\s*/u, ''),
    140,
  )
}

/**
 * The line under a refused call's `→ tool args`: who refused what, in a person's words —
 * `you refused \`rm out.txt\`: "keep the file"` — instead of the error the model reads.
 */
export function refusalText(
  call: ToolCallBlock,
  errorCode: string | undefined,
  resultText: string,
  userWords: string | undefined,
): string {
  const subject = callSubject(call)
  switch (errorCode) {
    case 'USER_REJECTED':
      return `✗ you refused ${subject}${userWords ? `: “${oneLine(userWords, 120)}”` : ''}`
    case 'APPROVAL_UNAVAILABLE':
      return `✗ ${subject} needed your approval and nobody could answer: not run`
    case 'APPROVAL_CANCELLED':
      return `✗ ${subject} was not run: the turn was interrupted`
    case 'TOOL_ABORTED':
      // aborted before it started (the harness says "was not run"), or stopped while it ran
      return NOT_RUN.test(resultText)
        ? `✗ ${subject} was not run: the turn was interrupted`
        : `✗ ${subject} was stopped: the turn was interrupted`
    case 'HOOK_DENIED':
      return `✗ a hook refused ${subject}: ${why(resultText).replace(/^a hook refused it:\s*/u, '')}`
    default:
      return `✗ ${subject} refused${errorCode ? ` (${errorCode})` : ''}: ${why(resultText)}`
  }
}
