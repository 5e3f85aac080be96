import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { oneLine } from './render.js'

/** The files of the demo workspace: a one-line bug and a test that catches it. */
export const demoFiles: Readonly<Record<string, string>> = {
  'greet.mjs': `// Greets someone by name.
export function greet(name) {
  return 'Hello, ' + name
}
`,
  'test.mjs': `import { greet } from './greet.mjs'

const got = greet('Keel')
if (got !== 'Hello, Keel!') {
  console.error(\`FAIL: greet('Keel') returned \${JSON.stringify(got)}, expected "Hello, Keel!"\`)
  process.exit(1)
}
console.log(\`PASS: greet('Keel') === \${JSON.stringify(got)}\`)
`,
}

/** The task the demo gives the agent. */
export const demoTask = 'The test in test.mjs fails. Fix greet.mjs so that `node test.mjs` passes.'

/** The system prompt of the demo agent. */
export const demoSystemPrompt =
  'You are Keel, a careful coding agent. Work inside the workspace with the tools: read before you edit, ' +
  'make the smallest change, run the test to check it, then answer in one or two sentences.'

/** Writes {@link demoFiles} into `dir` (created when missing). */
export async function writeDemoWorkspace(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const [name, text] of Object.entries(demoFiles)) await writeFile(join(dir, name), text, 'utf8')
}

/** The plan the scripted model keeps with `todo_write` (from `@keel/todo`). */
function plan(done: number): Array<{ id: string; content: string; status: string; activeForm: string }> {
  const steps = [
    ['read', 'Read greet.mjs and test.mjs', 'Reading the code and the test'],
    ['fix', 'Fix the greeting in greet.mjs', 'Fixing the greeting'],
    ['test', 'Run node test.mjs', 'Running the test'],
  ] as const
  return steps.map(([id, content, activeForm], i) => ({
    id,
    content,
    activeForm,
    status: i < done ? 'completed' : i === done ? 'in_progress' : 'pending',
  }))
}

/**
 * What the scripted model does, one response per model call: write a plan and read both
 * files (the two reads run in parallel), update the plan and edit the bug, run the test,
 * then (see {@link demoAnswer}) close the plan and answer. Chunks are 12 ms apart so the
 * streaming is visible. The scripted usage is plausible, not measured.
 */
export const demoScript: readonly ScriptedResponse[] = [
  {
    reasoning:
      'The test expects "Hello, Keel!". I should look at greet.mjs and at the test before changing anything.',
    text: 'Let me read the code and the test first.',
    toolCalls: [
      { name: 'todo_write', arguments: { todos: plan(0) } },
      { name: 'read_file', arguments: { path: 'greet.mjs' } },
      { name: 'read_file', arguments: { path: 'test.mjs' } },
    ],
    delayMs: 12,
    usage: { promptTokens: 812, completionTokens: 64, cacheHitTokens: 512, reasoningTokens: 24 },
  },
  {
    reasoning:
      "greet returns 'Hello, ' + name without the exclamation mark the test expects. One edit fixes it.",
    text: 'The greeting is missing its exclamation mark; fixing that.',
    toolCalls: [
      { name: 'todo_write', arguments: { todos: plan(1) } },
      {
        name: 'edit_file',
        arguments: {
          path: 'greet.mjs',
          oldString: "return 'Hello, ' + name",
          newString: "return 'Hello, ' + name + '!'",
        },
      },
    ],
    delayMs: 12,
    usage: { promptTokens: 1130, completionTokens: 71, cacheHitTokens: 896, reasoningTokens: 22 },
  },
  {
    text: 'Now I run the test.',
    toolCalls: [
      { name: 'todo_write', arguments: { todos: plan(2) } },
      { name: 'bash', arguments: { command: 'node test.mjs' } },
    ],
    delayMs: 12,
    usage: { promptTokens: 1262, completionTokens: 25, cacheHitTokens: 1152 },
  },
]

/** What the demo's test run came to, as the model was told it. */
export type TestOutcome =
  | { kind: 'passed'; line: string }
  | { kind: 'failed'; line: string }
  /** `node test.mjs` did not run (refused, timed out) or printed neither PASS nor FAIL. */
  | { kind: 'not-run'; line: string }
  | { kind: 'missing' }

/**
 * Reads the outcome of the last `bash` call from a tool result's text: a line starting
 * `PASS:` or `FAIL:` is what `test.mjs` prints; anything else (a refusal, `bash was not
 * run: …`, a timeout) means the test did not run. Only the bash result counts — a file the
 * model read (`test.mjs` itself holds both words) proves nothing.
 */
export function testOutcome(bashOutput: string | undefined): TestOutcome {
  if (bashOutput === undefined) return { kind: 'missing' }
  const lines = bashOutput.split('\n').map((l) => l.trim())
  const pass = lines.find((l) => l.startsWith('PASS:'))
  const fail = lines.find((l) => l.startsWith('FAIL:'))
  if (fail) return { kind: 'failed', line: fail }
  if (pass) return { kind: 'passed', line: pass }
  const first = lines.find((l) => l !== '') ?? '(no output)'
  return { kind: 'not-run', line: first.replace(/^Error \[[A-Z_]+\]: /u, '') }
}

type WireMessage = {
  role?: string
  content?: unknown
  tool_call_id?: string
  tool_calls?: Array<{ id?: string; function?: { name?: string } }>
}

/** The text of the last `bash` result the model was sent (paired by tool call id). */
export function lastBashOutput(messages: readonly WireMessage[]): string | undefined {
  const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''))
  const bashIds = new Set(
    messages.flatMap((m) => (m.tool_calls ?? []).filter((c) => c.function?.name === 'bash').map((c) => c.id)),
  )
  const result = [...messages].reverse().find((m) => m.role === 'tool' && bashIds.has(m.tool_call_id))
  return result ? text(result.content) : undefined
}

/**
 * The last two model calls, computed from what the test run returned (the last `bash`
 * result the model was sent), so the demo never claims what did not happen: first close
 * the plan (all done on a pass; the test step left open otherwise), then answer — a pass
 * only when the test printed PASS, the failure when it printed FAIL, and that the fix is
 * untested when the command did not run (refused without an OS sandbox or a person to ask).
 */
export function demoAnswer(request: RecordedRequest): ScriptedResponse {
  const messages = (request.body?.messages ?? []) as WireMessage[]
  const outcome = testOutcome(lastBashOutput(messages))
  // The plan is closed once the model's last call was a lone todo_write (after the test ran).
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant')
  const lastCalls = (lastAssistant?.tool_calls ?? []).map((c) => c.function?.name)
  const planClosed = lastCalls.length === 1 && lastCalls[0] === 'todo_write'
  const passed = outcome.kind === 'passed'
  if (!planClosed) {
    return {
      text: passed
        ? 'The test passes.'
        : outcome.kind === 'failed'
          ? 'The test still fails.'
          : 'I could not run the test.',
      toolCalls: [{ name: 'todo_write', arguments: { todos: plan(passed ? 3 : 2) } }],
      delayMs: 12,
      usage: { promptTokens: 1340, completionTokens: 30, cacheHitTokens: 1280 },
    }
  }
  const text =
    outcome.kind === 'passed'
      ? "Fixed: greet() now returns 'Hello, ' + name + '!', and `node test.mjs` passes."
      : outcome.kind === 'failed'
        ? `The test still fails after my edit: ${oneLine(outcome.line, 160)}`
        : outcome.kind === 'not-run'
          ? `I edited greet.mjs, but \`node test.mjs\` did not run (${oneLine(outcome.line, 160)}), so the fix is untested.`
          : 'I edited greet.mjs but have not run the test, so the fix is untested.'
  return { text, delayMs: 12, usage: { promptTokens: 1420, completionTokens: 30, cacheHitTokens: 1280 } }
}
