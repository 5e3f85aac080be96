// The shipped `coding` preset with its context and mode plugins together, in a real agent
// against the scripted server: instructions, a permission preset, plan mode and the title
// request, read from the requests the server received and from the log.
import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type RecordedRequest, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { createPresetAgent } from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const texts = (r: RecordedRequest): string[] =>
  ((r.body?.messages ?? []) as Array<{ content?: unknown }>).map((m) =>
    typeof m.content === 'string' ? m.content : '',
  )

describe('the coding preset', () => {
  it('delivers AGENTS.md, takes a permission preset and plan mode, and titles the session after its first turn', async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-coding-modes-')))
    // The shipped preset reads the user's hook settings and $KEEL_HOME/AGENTS.md: a private home
    // (this file runs in its own process).
    const saved = { HOME: process.env.HOME, KEEL_HOME: process.env.KEEL_HOME }
    process.env.HOME = base
    process.env.KEEL_HOME = join(base, 'keel')
    cleanups.push(async () => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    })
    const cwd = join(base, 'repo')
    await mkdir(join(cwd, '.git'), { recursive: true })
    await writeFile(join(cwd, 'AGENTS.md'), 'Run `make check` before you answer.\n')
    const server = await startScriptedServer({
      script: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] },
        { text: 'Plan: write x.txt.' },
        { text: 'Plan x.txt' },
      ],
    })
    const store = new JsonlStore({ home: join(base, 'keel') })
    cleanups.push(async () => {
      await store.close()
      await server.close()
    })
    const { agent } = await createPresetAgent({
      preset: 'coding',
      store,
      cwd,
      llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
      // a person at the session (as interactive keel lends one): the model is asked for a title
      answerers: [{ name: 'person', kind: 'interactive', answer: () => undefined }],
    })
    const names = agent.commands().map((c) => c.name)
    expect(names).toEqual(expect.arrayContaining(['permissions', 'instructions', 'init', 'plan', 'title']))
    expect(await agent.runCommand('permissions', 'ask-always')).toContain('ask-always')
    await agent.runCommand('plan')
    await agent.send('Add x.txt.')
    await agent.close()

    const first = texts(server.requests[0]!)
    expect(first.some((t) => t.includes('Run `make check` before you answer.'))).toBe(true)
    expect(first.some((t) => t.startsWith('Plan mode is on.'))).toBe(true)
    expect(texts(server.requests[1]!).at(-1)).toMatch(/^Error \[PLAN_MODE_READ_ONLY\]/)
    expect(server.requests[2]!.body?.tools).toBeUndefined()
    const events = (await store.load(agent.session.id)).events
    const types = events.map((e) => e.type)
    for (const type of [
      'permission/preset',
      'plan/mode',
      'instructions/loaded',
      'session/title-llm-request',
      'session/title',
    ]) {
      expect(types).toContain(type)
    }
    expect(events.find((e) => e.type === 'session/title')?.data).toMatchObject({ title: 'Plan x.txt' })
  })
})
