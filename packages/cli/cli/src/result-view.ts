import type { ToolResultMessage } from '@keel/llm'

/**
 * The last line the shell tool adds to what a command printed: how it ended. A command that
 * ran is no failed call for the agent (the model reads its output and status), but a summary
 * must not mark `exit 1` with a check mark.
 */
const COMMAND_END = /^\[(?:exit code (\d+|unknown)|killed by signal (\w+))\]$/u

/** The tools whose results end with {@link COMMAND_END}. */
const SHELL_TOOLS = new Set(['bash'])

/** How a tool result reads in a summary. */
export interface ToolOutcome {
  /** The call failed (its error code), or its command did not exit 0. */
  readonly failed: boolean
  /** `✓`, `✗ FILE_NOT_READ`, `✗ exit 1`, `✗ killed by SIGKILL`. */
  readonly mark: string
  /** Its meaningful lines: no blank ones, no `Error [CODE]: ` the mark names, no command status. */
  readonly lines: readonly string[]
}

/** The text of a tool result, an image as `[image/png image]`. */
export function resultText(result: ToolResultMessage): string {
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.mediaType} image]`)).join('\n')
}

/** What a summary shows of a tool result with its `errorCode` (see {@link ToolOutcome}). */
export function toolOutcome(result: ToolResultMessage, errorCode: string | undefined): ToolOutcome {
  const lines = resultText(result)
    .split('\n')
    .filter((l) => l.trim() !== '')
  if (lines[0] !== undefined) lines[0] = lines[0].replace(/^Error \[[A-Z0-9_]+\]:\s*/u, '')
  if (errorCode !== undefined) return { failed: true, mark: `✗ ${errorCode}`, lines }
  const end = SHELL_TOOLS.has(result.toolName) ? COMMAND_END.exec(lines.at(-1) ?? '') : null
  if (!end) return { failed: false, mark: '✓', lines }
  const output = lines.slice(0, -1)
  if (end[1] === '0') return { failed: false, mark: '✓', lines: output }
  return { failed: true, mark: end[2] ? `✗ killed by ${end[2]}` : `✗ exit ${end[1]}`, lines: output }
}

/** `✓ first line (+2 more lines)`, `✗ exit 1: first line`: the mark, then the `summary`. */
export function outcomeLine(outcome: ToolOutcome, summary: string): string {
  return `${outcome.mark}${outcome.failed ? ':' : ''} ${summary}`
}
