import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createAgent } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { fsTools } from '@keel/fs'
import { startScriptedServer } from '@keel/scripted-server'
import { shellTools } from '@keel/shell'
import { JsonlStore } from '@keel/store-jsonl'
import { todoPlugin, todoProjection } from '@keel/todo'
import { describe, expect, it } from 'vitest'
import { demoAnswer, demoScript, demoSystemPrompt, demoTask, writeDemoWorkspace } from '../src/index.js'

describe('end to end: the scripted coding task over real HTTP, real tools and the JSONL store', () => {
  it('fixes the file on disk and leaves a complete, reloadable session log', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-e2e-home-'))
    const workspace = await mkdtemp(join(tmpdir(), 'keel-e2e-ws-'))
    await writeDemoWorkspace(workspace)
    expect(() => execFileSync(process.execPath, ['test.mjs'], { cwd: workspace, stdio: 'pipe' })).toThrow()

    const server = await startScriptedServer({ script: demoScript, handler: demoAnswer })
    const store = new JsonlStore({ home })
    const handle = await store.create({ header: { cwd: workspace } })
    const id = handle.session.id
    const agent = await createAgent({
      llm: createDeepSeekAdapter({ baseURL: server.baseURL, env: {} }),
      session: handle,
      tools: [...fsTools(), ...shellTools()],
      plugins: [todoPlugin],
      cwd: workspace,
      systemPrompt: demoSystemPrompt,
    })
    const result = await agent.send(demoTask)
    await agent.close()
    await store.close()
    await server.close()
    expect(result.reason).toBe('completed')
    expect(result.text).toContain('passes')

    // the file on disk
    expect(readFileSync(join(workspace, 'greet.mjs'), 'utf8')).toContain("return 'Hello, ' + name + '!'")
    expect(execFileSync(process.execPath, ['test.mjs'], { cwd: workspace, encoding: 'utf8' })).toContain(
      'PASS',
    )

    // the session log, reloaded by a fresh store from disk
    expect(existsSync(store.fileOf(id))).toBe(true)
    const reloaded = await new JsonlStore({ home }).load(id)
    const types = reloaded.events.map((e) => e.type)
    // each step: the model's message, its tool calls, then per call in model order its result
    // (todo_write appends its todo/write event while it runs, before its own result)
    const step = (calls: number) => [
      'step/start',
      'assistant/message',
      ...Array<string>(calls).fill('tool/call'),
      'todo/write',
      ...Array<string>(calls).fill('tool/result'),
      'step/end',
    ]
    expect(types).toEqual([
      'system/message',
      'turn/start',
      'user/message',
      // the first step records its request's route and header (unchanged later, not repeated)
      ...step(3).flatMap((t) => (t === 'step/start' ? [t, 'request/context', 'request/header'] : [t])),
      ...step(2), // todo_write + edit_file
      ...step(2), // todo_write + bash
      ...step(1), // todo_write (all done)
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const calls = reloaded.events.flatMap((e) => (e.type === 'tool/call' ? [e.data] : []))
    expect(calls.map((c) => c.name)).toEqual([
      'todo_write',
      'read_file',
      'read_file',
      'todo_write',
      'edit_file',
      'todo_write',
      'bash',
      'todo_write',
    ])
    expect(JSON.parse(calls[6]!.arguments)).toEqual({ command: 'node test.mjs' })
    const results = reloaded.events.flatMap((e) => (e.type === 'tool/result' ? [e.data] : []))
    expect(results.map((r) => r.errorCode)).toEqual(Array(8).fill(undefined))
    expect(reloaded.project(todoProjection).map((t) => t.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ])
    expect(JSON.stringify(results[1]!.message.content)).toContain('Greets someone by name')
    expect(JSON.stringify(results[6]!.message.content)).toContain('PASS')
    const first = reloaded.events.find((e) => e.type === 'assistant/message')!
    expect(first.type === 'assistant/message' && first.data.message.content[0]).toMatchObject({
      type: 'reasoning',
    })
    expect(first.type === 'assistant/message' && first.data.usage).toMatchObject({
      inputTokens: 812,
      cacheHitTokens: 512,
    })
    expect(reloaded.events[reloaded.events.length - 1]).toMatchObject({
      type: 'turn/end',
      data: { reason: 'completed' },
    })
    expect(reloaded.header.cwd).toBe(workspace)
    // what the model saw last is the surface of the reloaded log minus the final answer
    expect(reloaded.deriveMessages().map((m) => m.role)).toEqual([
      'system',
      'user',
      ...['assistant', 'tool', 'tool', 'tool'],
      ...['assistant', 'tool', 'tool'],
      ...['assistant', 'tool', 'tool'],
      ...['assistant', 'tool'],
      'assistant',
    ])
    expect(server.requests).toHaveLength(5)
    expect(server.requests[4]!.body!.messages!.length).toBe(14)
  })
})

describe('oversized tool output with the JSONL store', () => {
  it('is stored aside in the session folder by default, and the log names the file', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-e2e-aside-'))
    const workspace = await mkdtemp(join(tmpdir(), 'keel-e2e-aside-ws-'))
    const command = `node -e "for (let i = 0; i < 2000; i++) console.log('line ' + i + ': ' + 'x'.repeat(40))"`
    const server = await startScriptedServer({
      script: [{ toolCalls: [{ name: 'bash', arguments: { command } }] }, { text: 'done' }],
    })
    const store = new JsonlStore({ home })
    const handle = await store.create({ header: { cwd: workspace } })
    const agent = await createAgent({
      llm: createDeepSeekAdapter({ baseURL: server.baseURL, env: {} }),
      session: handle,
      tools: shellTools(),
      cwd: workspace,
      maxResultChars: 2_000,
    })
    try {
      expect((await agent.send('print a lot')).reason).toBe('completed')
    } finally {
      await agent.close()
      await store.close()
      await server.close()
    }
    const result = (await new JsonlStore({ home }).load(handle.session.id)).events.find(
      (e) => e.type === 'tool/result',
    )
    if (result?.type !== 'tool/result') throw new Error('no tool/result')
    const aside = result.data.storedAside!
    expect(dirname(dirname(aside.path))).toBe(dirname(store.fileOf(handle.session.id)))
    expect(readFileSync(aside.path, 'utf8')).toContain('line 1999:')
    expect(aside.chars).toBeGreaterThan(2000 * 48)
    expect(JSON.stringify(result.data.message.content)).toContain(aside.path)
  })
})
