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

/**
 * What the scripted model does, one response per model call: read both files (two reads in
 * one step, run in parallel), edit the bug, run the test, answer. Chunks are 12 ms apart so
 * the streaming is visible. The scripted usage is plausible, not measured.
 */
export const demoScript: readonly ScriptedResponse[] = [
  {
    reasoning:
      'The test expects "Hello, Keel!". I should look at greet.mjs and at the test before changing anything.',
    text: 'Let me read the code and the test first.',
    toolCalls: [
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
    toolCalls: [{ name: 'bash', arguments: { command: 'node test.mjs' } }],
    delayMs: 12,
    usage: { promptTokens: 1262, completionTokens: 25, cacheHitTokens: 1152 },
  },
]

/**
 * The final answer, computed from what the test run actually printed (the last tool
 * result the model was sent), so the demo never claims a pass it did not see.
 */
export function demoAnswer(request: RecordedRequest): ScriptedResponse {
  const messages = request.body?.messages ?? []
  const last = messages[messages.length - 1]
  const output = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '')
  const passed = last?.role === 'tool' && output.includes('PASS')
  return {
    text: passed
      ? "Fixed: greet() now returns 'Hello, ' + name + '!', and `node test.mjs` passes."
      : `The test still fails after my edit; its output was: ${output.slice(0, 200)}`,
    delayMs: 12,
    usage: { promptTokens: 1340, completionTokens: 30, cacheHitTokens: 1280 },
  }
}
