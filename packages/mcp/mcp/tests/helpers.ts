import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Agent,
  type AgentObserver,
  type ApprovalAnswerer,
  createAgent,
  type PluginEntry,
  type StoreHandle,
  usePlugin,
} from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session, type SessionEvent, type SessionEventType } from '@keel/session'
import { afterEach } from 'vitest'
import { type McpConfig, mcpPlugin } from '../src/index.js'

/** The fixture server script (a real MCP server on the same SDK). */
export const FIXTURE = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url))

/** A stdio entry that runs the fixture with `args`. */
export function fixtureEntry(...args: string[]) {
  return { command: process.execPath, args: [FIXTURE, ...args] }
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** Runs `fn` after the current test (in reverse order of registration). */
export function later(fn: () => Promise<void> | void): void {
  cleanups.push(fn)
}

/** A fresh project directory and `$KEEL_HOME`, removed after the test. */
export function dirs(): { project: string; home: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-mcp-')))
  later(() => rmSync(root, { recursive: true, force: true }))
  const project = join(root, 'project')
  const home = join(root, 'home')
  mkdirSync(project)
  mkdirSync(home)
  return { project, home }
}

export interface McpRig {
  agent: Agent
  session: Session
  llm: ScriptedServer
  notices: string[]
  events<T extends SessionEventType>(type: T): Array<SessionEvent<T>>
  types(): string[]
}

let counter = 0

/** An agent with the MCP plugin (and `plugins` before it) against the scripted model server. */
export async function mcpRig(options: {
  script?: ScriptedResponse[]
  config?: Partial<McpConfig> & Record<string, unknown>
  plugins?: PluginEntry[]
  session?: Session | StoreHandle
  project?: string
  home?: string
  env?: NodeJS.ProcessEnv
  answerers?: ApprovalAnswerer[]
  observers?: AgentObserver[]
}): Promise<McpRig> {
  const llm = await startScriptedServer({ script: options.script ?? [] })
  later(() => llm.close())
  const d = options.project && options.home ? { project: options.project, home: options.home } : dirs()
  const target = options.session ?? Session.create(`mcp-test-${process.pid}-${++counter}`, { cwd: d.project })
  const session = target instanceof Session ? target : target.session
  const notices: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: llm.baseURL, model: 'scripted-model', env: {} }),
    session: target,
    cwd: d.project,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    plugins: [
      ...(options.plugins ?? []),
      usePlugin(
        mcpPlugin({ env: options.env ?? { PATH: process.env.PATH }, keelHome: d.home, random: () => 0.5 }),
        {
          userServers: false,
          ...options.config,
        } as McpConfig,
      ),
    ],
    answerers: options.answerers ?? [],
    observers: [
      {
        onDisplay: (n) => notices.push(n.text),
        onNotice: (n) => notices.push(`${n.code}: ${n.message}`),
      },
      ...(options.observers ?? []),
    ],
  })
  later(() => agent.close())
  return {
    agent,
    session,
    llm,
    notices,
    events: <T extends SessionEventType>(type: T) =>
      session.events.filter((e) => e.type === type) as unknown as Array<SessionEvent<T>>,
    types: () => session.events.map((e) => e.type),
  }
}

/** Starts the fixture over HTTP (`--http` or `--sse`) on loopback; resolves with its URL. */
export async function httpFixture(...args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  later(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGKILL')
      }),
  )
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const line = out.split('\n')[0]
      if (out.includes('\n')) resolve((JSON.parse(line!) as { port: number }).port)
    })
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited (${code})`)))
  })
  const path = args.includes('--sse') ? '/sse' : '/mcp'
  return { url: `http://127.0.0.1:${port}${path}`, child }
}

/** Waits until `check` holds (polling; bounded). */
export async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** The tool names a recorded model request offered. */
export function offered(body: unknown): string[] {
  return ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name)
}

/** A scripted model answer that calls one tool. */
export function call(id: string, name: string, args: unknown = {}) {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] }
}
