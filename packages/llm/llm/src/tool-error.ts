/**
 * The text of an error tool result, as the model reads it: `Error [<code>]: <message>`. The
 * one place that spells this form; every error result (a tool's failure, a call that was not
 * run, a call left unanswered) is built with it, so the model sees one shape and a reader of
 * a log can find the code without parsing prose.
 */
export function errorResultText(code: string, message: string): string {
  return `Error [${code}]: ${message}`
}
