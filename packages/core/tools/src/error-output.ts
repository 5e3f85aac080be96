import { errorResultText } from '@keel/llm'
import type { ToolOutput } from './tool.js'

/**
 * An error output the model reads as `Error [<code>]: <message>` (see `errorResultText`),
 * with `isError` and `errorCode` set: what a tool, the runtime or a plugin returns for a
 * call that failed or was not run.
 */
export function errorOutput(code: string, message: string): ToolOutput {
  return { content: [{ type: 'text', text: errorResultText(code, message) }], isError: true, errorCode: code }
}
