import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'

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

/**
 * The last two model calls, computed from what the test run actually printed (the last
 * `bash` result the model was sent), so the demo never claims a pass it did not see: first
 * close the plan (all done on a pass, the test step left open otherwise), then answer.
 */
export function demoAnswer(request: RecordedRequest): ScriptedResponse {
  const messages = request.body?.messages ?? []
  const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''))
  const testOutput = [...messages]
    .reverse()
    .find((m) => m.role === 'tool' && /PASS|FAIL/.test(text(m.content)))
  const output = text(testOutput?.content)
  const passed = output.includes('PASS')
  // The plan is closed once the model's last call was a lone todo_write (after the test ran).
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant') as
    | { tool_calls?: Array<{ function?: { name?: string } }> }
    | undefined
  const lastCalls = (lastAssistant?.tool_calls ?? []).map((c) => c.function?.name)
  const planClosed = lastCalls.length === 1 && lastCalls[0] === 'todo_write'
  if (!planClosed) {
    return {
      text: passed ? 'The test passes.' : 'The test still fails.',
      toolCalls: [{ name: 'todo_write', arguments: { todos: plan(passed ? 3 : 2) } }],
      delayMs: 12,
      usage: { promptTokens: 1340, completionTokens: 30, cacheHitTokens: 1280 },
    }
  }
  return {
    text: passed
      ? "Fixed: greet() now returns 'Hello, ' + name + '!', and `node test.mjs` passes."
      : `The test still fails after my edit; its output was: ${output.slice(0, 200)}`,
    delayMs: 12,
    usage: { promptTokens: 1420, completionTokens: 30, cacheHitTokens: 1280 },
  }
}
