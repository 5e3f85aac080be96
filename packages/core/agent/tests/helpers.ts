import { createDeepSeekAdapter, type DeepSeekOptions } from '@keel/deepseek'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session, type SessionEvent, type SessionEventType } from '@keel/session'
import { defineTool, type Tool } from '@keel/tools'
import { afterEach } from 'vitest'
import { z } from 'zod'
import {
  type Agent,
  type AgentObserver,
  type AgentOptions,
  type Clock,
  createAgent,
  type StoreHandle,
} from '../src/index.js'

let counter = 0

/** A scripted server, the real DeepSeek adapter (openai client) pointed at it, and an agent over a fresh session. */
export interface Rig {
  server: ScriptedServer
  agent: Agent
  session: Session
  /** Events of one type, in log order. */
  events<T extends SessionEventType>(type: T): Array<SessionEvent<T>>
  /** The event types in log order. */
  types(): string[]
  close(): Promise<void>
}

export async function rig(
  script: ScriptedResponse[],
  options: Partial<Omit<AgentOptions, 'llm' | 'session'>> & {
    session?: Session | StoreHandle
    /** Extra options of the DeepSeek adapter (idle timeout, capabilities, …). */
    adapter?: DeepSeekOptions
  } = {},
): Promise<Rig> {
  const server = await startScriptedServer({ script })
  const { adapter, ...agentOptions } = options
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {}, ...adapter })
  const target = agentOptions.session ?? Session.create(`agent-test-${process.pid}-${++counter}`)
  const session = target instanceof Session ? target : target.session
  const agent = await createAgent({
    cwd: process.cwd(),
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    ...agentOptions,
    llm,
    session: target,
  })
  return {
    server,
    agent,
    session,
    events: <T extends SessionEventType>(type: T) =>
      session.events.filter((e) => e.type === type) as unknown as Array<SessionEvent<T>>,
    types: () => session.events.map((e) => e.type),
    close: async () => {
      await agent.close()
      await server.close()
    },
  }
}

/** A clock whose timers fire on the next macrotask, recording each requested wait. */
export function instantClock(): Clock & { waits: number[] } {
  const waits: number[] = []
  return {
    waits,
    now: () => Date.now(),
    setTimeout: (callback, ms) => {
      waits.push(ms)
      return setImmediate(callback)
    },
    clearTimeout: (handle) => clearImmediate(handle as NodeJS.Immediate),
  }
}

/** Collects every live callback for assertions. */
export function recorder(): AgentObserver & { log: string[]; text: string; reasoning: string } {
  const rec = {
    log: [] as string[],
    text: '',
    reasoning: '',
    onTextDelta(d: { text: string }) {
      rec.text += d.text
    },
    onReasoningDelta(d: { text: string }) {
      rec.reasoning += d.text
    },
    onToolCallStarted(i: { call: { name: string; id: string } }) {
      rec.log.push(`start ${i.call.id}`)
    },
    onToolCallFinished(i: { call: { id: string }; errorCode?: string }) {
      rec.log.push(`finish ${i.call.id}${i.errorCode ? ` ${i.errorCode}` : ''}`)
    },
    onRetry(n: { attempt: number }) {
      rec.log.push(`retry ${n.attempt}`)
    },
    onDisplay(n: { source: string; kind: string; text: string }) {
      rec.log.push(`display ${n.source} ${n.kind} ${n.text}`)
    },
  }
  return rec
}

/**
 * Tools whose runs are observable: `peek` is concurrency-safe and waits at a barrier until
 * `expected` peeks are running at once (or 2 s pass), so parallelism shows as `maxActive`;
 * `poke` is unsafe and logs begin/end.
 */
export function probeTools(expectedParallel: number) {
  const log: string[] = []
  let active = 0
  let maxActive = 0
  let arrived = 0
  let release!: () => void
  const barrier = new Promise<void>((resolve) => {
    release = resolve
  })
  const peek: Tool<{ key: string; delay?: number }> = defineTool({
    name: 'peek',
    description: 'Reads a key.',
    inputSchema: z.strictObject({ key: z.string(), delay: z.number().optional() }),
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    async call(input) {
      active++
      maxActive = Math.max(maxActive, active)
      log.push(`begin peek ${input.key}`)
      if (++arrived >= expectedParallel) release()
      await Promise.race([barrier, new Promise((r) => setTimeout(r, 2000))])
      // the first key finishes last, so completion order differs from model order
      if (input.delay) await new Promise((r) => setTimeout(r, input.delay))
      log.push(`end peek ${input.key}`)
      active--
      return `value of ${input.key}`
    },
  })
  const poke: Tool<{ key: string }> = defineTool({
    name: 'poke',
    description: 'Writes a key.',
    inputSchema: z.strictObject({ key: z.string() }),
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
    async call(input) {
      active++
      maxActive = Math.max(maxActive, active)
      log.push(`begin poke ${input.key}`)
      await new Promise((r) => setTimeout(r, 5))
      log.push(`end poke ${input.key}`)
      active--
      return `poked ${input.key}`
    },
  })
  return {
    tools: [peek, poke] as Array<Tool<unknown>>,
    log,
    get maxActive() {
      return maxActive
    },
  }
}

/**
 * A `rig` opener for one test file: every rig it opens is closed after each test. Call it
 * at the top level of the file.
 */
export function rigsClosedAfterEach(): (...args: Parameters<typeof rig>) => Promise<Rig> {
  const open: Rig[] = []
  afterEach(async () => {
    while (open.length > 0) await open.pop()!.close()
  })
  return async (...args) => {
    const r = await rig(...args)
    open.push(r)
    return r
  }
}
