import type { PluginDefinition } from '@keel/agent'
import { soloContext } from '@keel/agent/testing'
import { createDeepSeekAdapter } from '@keel/deepseek'
import type { LlmAdapter, TokenUsage, ToolCallId } from '@keel/llm'
import {
  type RecordedRequest,
  type ScriptedResponse,
  type ScriptedServer,
  type ScriptHandler,
  startScriptedServer,
} from '@keel/scripted-server'
import { Session } from '@keel/session'
import { todoConfigSchema, todoPlugin } from '@keel/todo'
import { defineTool } from '@keel/tools'
import { userApprovalConfigSchema, userApprovalPlugin } from '@keel/user-approval'
import { afterEach } from 'vitest'
import { z } from 'zod'
import { SUMMARY_SOURCE, type WorkingStateSources } from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Registers a cleanup run after the current test, in reverse order. */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup)
}

/** The marker every summary request's final instruction starts with. */
export const SUMMARY_MARKER = 'Context compaction:'

/** A scripted server (closed after the test) and the real DeepSeek adapter pointed at it. */
export async function serve(
  options: { script?: ScriptedResponse[]; handler?: ScriptHandler } = {},
): Promise<{ server: ScriptedServer; llm: LlmAdapter }> {
  const server = await startScriptedServer(options)
  onCleanup(() => server.close())
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
  return { server, llm }
}

type Chat = Array<{ role: string; content?: unknown; tool_call_id?: string; tool_calls?: unknown[] }>

/** The chat messages of a recorded request. */
export function messagesOf(request: RecordedRequest): Chat {
  return (request.body?.messages ?? []) as Chat
}

/** The text of the last message of a request. */
export function lastText(request: RecordedRequest): string {
  const last = messagesOf(request).at(-1)
  return typeof last?.content === 'string' ? last.content : ''
}

/** Whether a request is a compaction summary request. */
export function isSummaryRequest(request: RecordedRequest): boolean {
  return lastText(request).startsWith(SUMMARY_MARKER)
}

const stream = {
  provider: 'test',
  model: 'm',
  startedAt: 1,
  endedAt: 2,
  chunks: 1,
  finishReason: 'stop' as const,
}

/** One tool call a scripted step makes, with the output it gets. */
export interface Call {
  name: string
  args: Record<string, unknown>
  output: string
  errorCode?: string
}

/** One step: optional assistant text, tool calls, and provider usage for the message. */
export interface Step {
  text?: string
  calls?: Call[]
  usage?: TokenUsage
}

let callCounter = 0

/**
 * Writes history straight into a session in the agent's order (turn/start, user/message,
 * step/start, assistant/message, tool/call…, tool/result…, step/end, turn/end). With
 * `open: true` the turn is left open between steps, as before the agent's next step.
 */
export function writeTurn(
  session: Session,
  user: string,
  steps: Step[],
  options: { open?: boolean } = {},
): number {
  const turn = session.lastTurn + 1
  session.append('turn/start', { turn })
  session.append('user/message', { message: { role: 'user', content: [{ type: 'text', text: user }] } })
  steps.forEach((s, index) => {
    const step = index + 1
    session.append('step/start', { turn, step })
    const calls = (s.calls ?? []).map((c) => ({ ...c, id: `call_${++callCounter}` as ToolCallId }))
    session.append('assistant/message', {
      turn,
      step,
      message: {
        role: 'assistant',
        content: [
          ...(s.text === undefined ? [] : [{ type: 'text' as const, text: s.text }]),
          ...calls.map((c) => ({
            type: 'tool-call' as const,
            id: c.id,
            name: c.name,
            arguments: JSON.stringify(c.args),
          })),
        ],
      },
      stream,
      ...(s.usage ? { usage: s.usage } : {}),
    })
    for (const c of calls) {
      session.append('tool/call', {
        turn,
        step,
        callId: c.id,
        name: c.name,
        arguments: JSON.stringify(c.args),
      })
    }
    for (const c of calls) {
      session.append('tool/result', {
        turn,
        step,
        message: {
          role: 'tool',
          toolCallId: c.id,
          toolName: c.name,
          content: [{ type: 'text', text: c.output }],
          ...(c.errorCode ? { isError: true as const } : {}),
        },
        ...(c.errorCode ? { errorCode: c.errorCode } : {}),
      })
    }
    session.append('step/end', { turn, step })
  })
  if (!options.open) session.append('turn/end', { turn, reason: 'completed' })
  return turn
}

/** A text of `chars` characters. */
export function filler(chars: number, seed = 'x'): string {
  const line = `${seed}: the quick brown fox jumps over the lazy dog. `
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars)
}

/** Every tool call id of the assistant messages on the surface has a tool message, and vice versa. */
export function toolPairsIntact(session: Session): boolean {
  const calls = new Set<string>()
  const results = new Set<string>()
  for (const m of session.deriveMessages()) {
    if (m.role === 'assistant') for (const b of m.content) if (b.type === 'tool-call') calls.add(b.id)
    if (m.role === 'tool') results.add(m.toolCallId)
  }
  return calls.size === results.size && [...calls].every((id) => results.has(id))
}

/** The summary messages on the surface. */
export function summariesOnSurface(session: Session): string[] {
  return session
    .surfaceSeqs()
    .map((seq) => session.events[seq]!)
    .filter((e) => e.type === 'user/message' && e.data.source === SUMMARY_SOURCE)
    .map((e) => (e.type === 'user/message' ? (e.data.message.content[0] as { text: string }).text : ''))
}

/** A fresh session with a system prompt. */
export function newSession(id: string, options: Parameters<typeof Session.create>[3] = {}): Session {
  const session = Session.create(id, {}, undefined, options)
  session.append('system/message', {
    message: { role: 'system', content: [{ type: 'text', text: 'You are a careful engineer.' }] },
  })
  return session
}

/**
 * A session loaded from a log that already holds the approval plugin's events, as written
 * by an agent with `@keel/user-approval` loaded. The payloads are that plugin's:
 * `{ approvalPolicy }` and `{ sandboxMode }`. Readable without the plugin: the types are
 * in the generated known-event list.
 */
export function sessionWithPolicy(id: string, policy: unknown, sandbox: unknown): Session {
  const seed = [
    {
      type: 'system/message',
      seq: 0,
      time: 1,
      data: { message: { role: 'system', content: [{ type: 'text', text: 'You are a careful engineer.' }] } },
    },
    { type: 'approval/policy', seq: 1, time: 1, data: policy },
    { type: 'sandbox/mode', seq: 2, time: 1, data: sandbox },
  ]
  return Session.create(id, {}, seed)
}

/** A stand-in for @keel/fs's read_file: big outputs, same name and path argument. */
export const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: z.strictObject({ path: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  async call({ path }) {
    return filler(8_000, `contents of ${path}`)
  },
})

/**
 * The model's side of one turn that fills the context: a todo list, then four `read_file`
 * calls with long thoughts (each output ~8,000 chars), then a short answer.
 */
export function readFourFilesTurn(): ScriptedResponse[] {
  return [
    {
      toolCalls: [
        {
          name: 'todo_write',
          arguments: {
            todos: [
              { id: 'read', content: 'Read the four files', status: 'in_progress' },
              { id: 'report', content: 'Report', status: 'pending' },
            ],
          },
        },
      ],
    },
    ...['a.ts', 'b.ts', 'c.ts', 'd.ts'].map((path) => ({
      text: filler(3_000, `thinking about ${path}`),
      toolCalls: [{ name: 'read_file', arguments: { path } }],
    })),
    { text: 'All four read.' },
  ]
}

/**
 * The working-state sources the real `@keel/todo` and `@keel/user-approval` plugins provide
 * (`todo.list`, `approval.policy`), set up on `session` with their real setup, as the
 * compaction plugin receives them in an agent.
 */
export async function pluginSources(
  session: Session,
  approvalConfig: Record<string, unknown> = {},
): Promise<WorkingStateSources> {
  const todo = soloContext(todoPlugin as PluginDefinition<unknown>, todoConfigSchema.parse({}), { session })
  await todoPlugin.setup?.(todo.context as never)
  todo.done()
  const approval = soloContext(
    userApprovalPlugin as PluginDefinition<unknown>,
    userApprovalConfigSchema.parse({ osSandbox: 'off', ...approvalConfig }),
    { session },
  )
  await userApprovalPlugin.setup?.(approval.context as never)
  approval.done()
  const list = todo.services.get('todo.list')!
  const policy = approval.services.get('approval.policy')!
  return { todos: () => list.render(), policy: () => policy.current() }
}
