// A real agent with the compaction and todo plugins, its log in the real JSONL store, its
// model the real DeepSeek adapter over HTTP against the scripted server.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type Agent,
  type AgentOptions,
  createAgent,
  type DisplayNotice,
  type PluginEntry,
  usePlugin,
} from '@keel/agent'
import { createDeepSeekAdapter, type DeepSeekOptions } from '@keel/deepseek'
import type { LlmAdapter } from '@keel/llm'
import { type ScriptedServer, type ScriptedServerOptions, startScriptedServer } from '@keel/scripted-server'
import type { Session } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { todoPlugin } from '@keel/todo'
import type { Tool } from '@keel/tools'
import { compactionPlugin } from '../src/index.js'
import { onCleanup } from './helpers.js'

export interface RealAgent {
  readonly server: ScriptedServer
  readonly llm: LlmAdapter
  readonly agent: Agent
  readonly session: Session
  readonly store: JsonlStore
  readonly root: string
  readonly displayed: DisplayNotice[]
}

export interface RealAgentOptions {
  readonly id: string
  readonly server: ScriptedServerOptions
  readonly compaction?: Record<string, unknown>
  readonly tools?: ReadonlyArray<Tool<unknown>>
  readonly plugins?: readonly PluginEntry[]
  readonly adapter?: Partial<DeepSeekOptions>
  readonly agent?: Partial<Omit<AgentOptions, 'llm' | 'session' | 'plugins' | 'tools'>>
}

/** Starts the server, the store and the agent; everything is closed after the test. */
export async function realAgent(options: RealAgentOptions): Promise<RealAgent> {
  const root = mkdtempSync(join(tmpdir(), 'keel-compaction-real-'))
  const store = new JsonlStore({ home: join(root, 'store') })
  const server = await startScriptedServer(options.server)
  onCleanup(async () => {
    await server.close()
    await store.close()
    rmSync(root, { recursive: true, force: true })
  })
  const llm = createDeepSeekAdapter({
    baseURL: server.baseURL,
    model: 'scripted-model',
    env: {},
    ...options.adapter,
  })
  const handle = await store.create({ id: options.id })
  const displayed: DisplayNotice[] = []
  const agent = await createAgent({
    llm,
    session: handle,
    cwd: root,
    systemPrompt: 'You are a careful engineer.',
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    ...options.agent,
    plugins: [
      usePlugin(compactionPlugin(), options.compaction ?? {}),
      usePlugin(todoPlugin, { reminderAfterSteps: 0 }),
      ...(options.plugins ?? []),
    ],
    tools: [...(options.tools ?? [])],
    observers: [{ onDisplay: (notice) => displayed.push(notice) }, ...(options.agent?.observers ?? [])],
  })
  onCleanup(() => agent.close())
  return { server, llm, agent, session: handle.session, store, root, displayed }
}

/** The chat requests the server received that are not summary requests. */
export function agentRequests(server: ScriptedServer) {
  return server.requests.filter((r) => !isSummary(r))
}

/** Whether a recorded request is a compaction summary request (its last message is the instruction). */
export function isSummary(request: ScriptedServer['requests'][number]): boolean {
  const last = request.body?.messages?.at(-1)
  return typeof last?.content === 'string' && last.content.startsWith('Context compaction:')
}
