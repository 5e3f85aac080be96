// A parent agent from a preset with @keel/subagents, a real JSONL store and one scripted
// server answering the parent and every child: requests are routed by their system prompt.
import { mkdir, mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ApprovalAnswerer } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import {
  type RecordedRequest,
  type ScriptedResponse,
  type ScriptedServer,
  startScriptedServer,
} from '@keel/scripted-server'
import type { SessionEvent } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { createPresetAgent, definePreset, type PresetAgent } from '../src/index.js'

/** The parent's system prompt (what routes a request to the parent's script). */
export const PARENT_PROMPT = 'You are the parent agent of this test.'

/** One scripted answer, or a function producing it when the request arrives. */
export type Step =
  | ScriptedResponse
  | ((request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>)

/** Markers of the shipped agents' system prompts. */
export const EXPLORE = 'read-only exploration subagent'
export const GENERAL = 'You are a subagent of a coding agent'

export interface SubagentRig {
  base: string
  cwd: string
  home: string
  store: JsonlStore
  server: ScriptedServer
  llm: ReturnType<typeof createDeepSeekAdapter>
  /** Queues answers for the requests whose system prompt contains `marker`. */
  route(marker: string, ...steps: Step[]): void
  /** The requests whose system prompt contains `marker`, in arrival order. */
  requestsOf(marker: string): RecordedRequest[]
  /** A parent agent over a new session. */
  parent(options?: {
    answerers?: ApprovalAnswerer[]
    approvalPolicy?: 'strict' | 'on_request' | 'never'
    subagents?: Record<string, unknown>
    /** With @keel/hooks and this config (its homes default to the rig's). */
    hooks?: Record<string, unknown>
  }): Promise<PresetAgent>
  close(): Promise<void>
}

/** The events of one type, narrowed. */
export function ofType<T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T) {
  return events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type)
}

export function systemOf(request: RecordedRequest): string {
  const first = request.body?.messages?.[0]
  return first?.role === 'system' && typeof first.content === 'string' ? first.content : ''
}

export async function subagentRig(): Promise<SubagentRig> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-subagents-')))
  const cwd = join(base, 'ws')
  const home = join(base, 'keel')
  await mkdir(cwd, { recursive: true })
  const routes = new Map<string, Step[]>()
  const server = await startScriptedServer({
    handler: async (request) => {
      const system = systemOf(request)
      const marker = [...routes.keys()].find((m) => system.includes(m))
      const step = marker === undefined ? undefined : routes.get(marker)!.shift()
      if (step === undefined)
        throw new Error(
          `no scripted answer left for a request with system prompt ${JSON.stringify(system.slice(0, 80))}`,
        )
      return typeof step === 'function' ? step(request) : step
    },
  })
  const store = new JsonlStore({ home })
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
  const agents: PresetAgent[] = []
  return {
    base,
    cwd,
    home,
    store,
    server,
    llm,
    route(marker, ...steps) {
      routes.set(marker, [...(routes.get(marker) ?? []), ...steps])
    },
    requestsOf: (marker) => server.requests.filter((r) => systemOf(r).includes(marker)),
    async parent(options = {}) {
      const preset = definePreset({
        id: 'delegating',
        description: 'approval, todo and subagents over fs and shell',
        plugins: [
          { use: '@keel/user-approval', config: { osSandbox: 'off' } },
          { use: '@keel/todo' },
          { use: '@keel/subagents', config: { home: base, keelHome: home, ...options.subagents } },
          ...(options.hooks
            ? [{ use: '@keel/hooks', config: { home: base, keelHome: home, ...options.hooks } }]
            : []),
        ],
        tools: ['fs', 'shell'],
        policy: { approvalPolicy: options.approvalPolicy ?? 'on_request', sandboxMode: 'workspace_write' },
      })
      const built = await createPresetAgent({
        llm,
        cwd,
        preset,
        store,
        systemPrompt: PARENT_PROMPT,
        answerers: options.answerers ?? [],
        retry: { maxRetries: 0 },
      })
      agents.push(built)
      return built
    },
    async close() {
      for (const built of agents) await built.agent.close().catch(() => undefined)
      await store.close()
      await server.close()
    },
  }
}
