// The plugin inside a real agent, against the scripted chat-completions server through the
// real DeepSeek adapter: the assertions are on the requests the server received.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent, type PluginEntry, usePlugin } from '@keel/agent'
import { compactionPlugin } from '@keel/compaction'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { fsTools } from '@keel/fs'
import { type RecordedRequest, type ScriptHandler, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { afterEach, describe, expect, it } from 'vitest'
import { INSTRUCTIONS_SOURCE, instructionsProjection, projectInstructions } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function repo(files: Record<string, string>): { root: string; home: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'keel-instr-agent-')))
  cleanups.push(() => rmSync(base, { recursive: true, force: true }))
  const root = join(base, 'repo')
  mkdirSync(join(root, '.git'), { recursive: true })
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return { root, home: join(base, 'home') }
}

type Chat = Array<{ role: string; content?: unknown }>
const chat = (r: RecordedRequest): Chat => (r.body?.messages ?? []) as Chat
const text = (m: { content?: unknown }): string => (typeof m.content === 'string' ? m.content : '')
/** The instruction messages of a request (the adapter sends developer messages as `system`). */
const instructionsIn = (r: RecordedRequest): string[] =>
  chat(r)
    .map(text)
    .filter((t) => t.startsWith('Project instructions'))

async function rig(
  cwd: string,
  home: string,
  handler: ScriptHandler,
  { session = Session.create('instr'), extra = [], config = {} }: RigOptions = {},
) {
  const server = await startScriptedServer({ handler })
  const displayed: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd,
    systemPrompt: 'You are careful.',
    plugins: [
      usePlugin(projectInstructions({ home, env: {} }), { keelHome: join(home, '.keel'), ...config }),
      ...extra,
    ],
    tools: fsTools(),
    observers: [{ onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`) }],
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { server, agent, session, displayed }
}

interface RigOptions {
  session?: Session
  extra?: PluginEntry[]
  config?: Record<string, unknown>
}

const ok: ScriptHandler = () => ({ text: 'ok' })

describe('project instructions in a real agent', () => {
  it('delivers the files once, in order, logs their digests, and sends them again only when one changes', async () => {
    const { root, home } = repo({ 'AGENTS.md': 'Use pnpm.\n', 'pkg/CLAUDE.md': 'Tabs, not spaces.\n' })
    mkdirSync(join(home, '.keel'), { recursive: true })
    writeFileSync(join(home, '.keel/AGENTS.md'), 'Answer in English.\n')
    const { server, agent, session, displayed } = await rig(join(root, 'pkg'), home, ok)

    await agent.send('first')
    await agent.send('second')
    const first = instructionsIn(server.requests[0]!)
    expect(first).toHaveLength(1)
    const message = first[0]!
    expect(message.indexOf('Use pnpm.')).toBeLessThan(message.indexOf('Tabs, not spaces.'))
    expect(message.indexOf('Tabs, not spaces.')).toBeLessThan(message.indexOf('Answer in English.'))
    expect(message).toContain('<instructions path="pkg/CLAUDE.md">')
    // Unchanged: the second turn's request carries the one copy from the first turn.
    expect(instructionsIn(server.requests[1]!)).toEqual([message])
    const loaded = session.events.filter((e) => e.type === 'instructions/loaded')
    expect(loaded).toHaveLength(1)
    expect(loaded[0]!.data).toMatchObject({
      reason: 'start',
      files: [
        { path: 'AGENTS.md', scope: 'project', bytes: 10, deliveredBytes: 10 },
        { path: 'pkg/CLAUDE.md', scope: 'project' },
        { path: join(home, '.keel/AGENTS.md'), scope: 'user' },
      ],
    })
    const delivered = session.events.filter(
      (e) => e.type === 'developer/message' && e.data.source === INSTRUCTIONS_SOURCE,
    )
    expect(delivered).toHaveLength(1)
    expect(displayed[0]).toMatch(/^instructions: loaded AGENTS\.md \(10 bytes\), pkg\/CLAUDE\.md/)

    writeFileSync(join(root, 'AGENTS.md'), 'Use npm.\n')
    await agent.send('third')
    const third = instructionsIn(server.requests[2]!)
    expect(third).toHaveLength(2)
    expect(third[1]).toContain('Use npm.')
    expect(session.events.filter((e) => e.type === 'instructions/loaded').map((e) => e.data.reason)).toEqual([
      'start',
      'changed',
    ])
  })

  it('cuts an oversized file with a notice the model reads', async () => {
    const { root, home } = repo({ 'AGENTS.md': `${'rule\n'.repeat(400)}` })
    const { server, agent, session, displayed } = await rig(root, home, ok, {
      config: { maxFileBytes: 1000 },
    })
    await agent.send('go')
    const [message] = instructionsIn(server.requests[0]!)
    expect(message).toContain(
      '[Keel: AGENTS.md was cut here: it is 2,000 bytes and only the first 1,000 are shown (the per-file cap). Read the file for the rest.]',
    )
    expect(session.project(instructionsProjection).last?.loaded.files[0]).toMatchObject({ cut: 'file-cap' })
    expect(displayed[0]).toContain('AGENTS.md (1,000 bytes, cut from 2,000)')
  })

  it('does not deliver again on resume, and delivers again after a compaction replaced it', async () => {
    const { root, home } = repo({ 'AGENTS.md': 'Never push to main.\n' })
    const filler = 'lorem ipsum dolor sit amet '.repeat(150)
    const handler: ScriptHandler = (request) => {
      const last = text(chat(request).at(-1) ?? {})
      return last.startsWith('Context compaction:')
        ? { text: 'Summary: the user sent filler.' }
        : { text: 'ok' }
    }
    const first = await rig(root, home, handler)
    await first.agent.send(`one ${filler}`)
    await first.agent.close()

    // Resume: the same log in a new agent (a new process); the copy is still in the history.
    const resumed = Session.create('instr', {}, JSON.parse(JSON.stringify(first.session.events)))
    const second = await rig(root, home, handler, {
      session: resumed,
      extra: [
        usePlugin(compactionPlugin(), { contextWindow: 4000, keepRecent: 0.05, target: 0.5, threshold: 1 }),
      ],
    })
    await second.agent.send(`two ${filler}`)
    expect(instructionsIn(second.server.requests[0]!)).toHaveLength(1)
    await second.agent.runCommand('compact')
    const summary = second.session.events.find((e) => e.type === 'compaction/summary')
    expect(summary).toBeDefined()
    await second.agent.send('three')
    const after = second.server.requests.at(-1)!
    expect(instructionsIn(after)).toHaveLength(1)
    expect(instructionsIn(after)[0]).toContain('Never push to main.')
    const reasons = resumed.events.filter((e) => e.type === 'instructions/loaded').map((e) => e.data.reason)
    expect(reasons).toEqual(['start', 'compact'])
  })

  it('/instructions in a project without instruction files says so, not that earlier ones were dropped', async () => {
    const { root, home } = repo({})
    const { agent } = await rig(root, home, ok)
    expect(await agent.runCommand('instructions')).toBe(
      'no project instruction files (AGENTS.md, CLAUDE.md, .keel/AGENTS.md from the project root down to the working directory)\nnothing delivered yet',
    )
  })

  it('loads an import from outside the project only after the person approves it', async () => {
    const { root, home } = repo({})
    const shared = join(root, '..', 'shared.md')
    writeFileSync(shared, 'Shared team rule.\n')
    writeFileSync(join(root, 'AGENTS.md'), 'Local rule. @../shared.md\n')
    const { server, agent, session } = await rig(root, home, ok)
    await agent.send('one')
    const [before] = instructionsIn(server.requests[0]!)
    expect(before).not.toContain('Shared team rule.')
    expect(before).toContain(
      `- ${shared} (imported by AGENTS.md): outside the project; not loaded until the user approves it`,
    )
    const pasted = await agent.runCommand('instructions', 'q'.repeat(1_000_000))
    expect(pasted).toMatch(/^unknown argument "q+…\[/) // a pasted megabyte is not echoed back whole
    expect(String(pasted).length).toBeLessThan(1_000)
    expect(await agent.runCommand('instructions', 'approve')).toContain(shared)
    await agent.send('two')
    const all = instructionsIn(server.requests[1]!)
    expect(all).toHaveLength(2)
    expect(all[1]).toContain('Shared team rule.')
    expect(session.project(instructionsProjection).approved).toEqual([shared])
  })

  it('/init has the model draft AGENTS.md, which reaches the model on the next turn', async () => {
    const { root, home } = repo({
      'README.md': '# Widget\nRun `make test`.\n',
      Makefile: 'test:\n\tnpm test\n',
    })
    const handler: ScriptHandler = (request) =>
      request.index === 0
        ? {
            toolCalls: [
              {
                name: 'write_file',
                arguments: { path: 'AGENTS.md', content: '# Widget\n- Test with `make test`.\n' },
              },
            ],
          }
        : { text: 'done' }
    const { server, agent, session } = await rig(root, home, handler)
    expect(await agent.runCommand('init')).toContain(join(root, 'AGENTS.md'))
    await agent.idle()
    const prompt = text(chat(server.requests[0]!).at(-1)!)
    expect(prompt).toContain(`Write an AGENTS.md file for the repository at ${root}`)
    expect(prompt).toContain('--- README.md ---\n# Widget\nRun `make test`.')
    expect(prompt).toContain('--- Makefile ---')
    expect(instructionsIn(server.requests[0]!)).toEqual([])
    expect(session.events.find((e) => e.type === 'user/message')?.data.source).toBe(
      'project-instructions/init',
    )
    await agent.send('next')
    const [delivered] = instructionsIn(server.requests.at(-1)!)
    expect(delivered).toContain('- Test with `make test`.')
  })
})
