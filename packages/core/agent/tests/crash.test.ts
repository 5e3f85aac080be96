import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { startScriptedServer } from '@keel/scripted-server'
import { shellTools } from '@keel/shell'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../src/index.js'

const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))
const commandChild = fileURLToPath(new URL('./fixtures/command-child.ts', import.meta.url))
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function waitForLine(proc: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    proc.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      if (buffered.split('\n').includes(line)) resolve()
    })
    proc.once('exit', (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before printing '${line}'`)),
    )
  })
}

/** Runs a fixture (`node --import tsx <args>`), waits for it to print `line`, then SIGKILLs it. */
async function killAfterLine(args: string[], line: string): Promise<void> {
  const proc = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  cleanups.push(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
  })
  await waitForLine(proc, line)
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGKILL')
  await exited
}

describe('a session never becomes unusable', () => {
  it('a command that has answered is on disk: SIGKILL right after loses neither its run nor its answer', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-crash-'))
    cleanups.push(() => rmSync(home, { recursive: true, force: true }))
    await killAfterLine([commandChild, home, 'commanded', home], 'answered')
    const store = new JsonlStore({ home })
    const session = await store.load('commanded')
    await store.close()
    expect(
      session.events.flatMap((e) => (e.type === 'command/run' || e.type === 'command/done' ? [e.data] : [])),
    ).toEqual([
      expect.objectContaining({ name: 'note', args: 'kept' }),
      expect.objectContaining({ kind: 'success', text: 'noted kept' }),
    ])
  }, 60_000)

  it('after SIGKILL while bash runs `sleep 30`, reopening answers the call (TOOL_INTERRUPTED) and the next turn works', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-crash-'))
    cleanups.push(() => rmSync(home, { recursive: true, force: true }))
    const server = await startScriptedServer({
      script: [
        { toolCalls: [{ id: 'call_sleep', name: 'bash', arguments: { command: 'sleep 30' } }] },
        { text: 'Back again.' },
      ],
    })
    cleanups.push(() => server.close())
    await killAfterLine([child, home, 'crashed', server.baseURL, home], 'running')

    const store = new JsonlStore({ home })
    const handle = await store.open('crashed')
    const session = handle.session
    const types = session.events.map((e) => e.type)
    expect(types.slice(-4)).toEqual(['tool/call', 'tool/result', 'step/end', 'turn/end'])
    const result = session.events.find((e) => e.type === 'tool/result')!
    expect(result.data).toMatchObject({
      errorCode: 'TOOL_INTERRUPTED',
      message: { toolCallId: 'call_sleep', isError: true },
    })
    expect(JSON.stringify(result.data)).toContain('the process stopped before the tool returned its result')
    expect(session.events.at(-1)!.data).toMatchObject({ reason: 'interrupted' })

    const agent = await createAgent({
      llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
      session: handle,
      tools: shellTools(),
      cwd: home,
    })
    cleanups.push(() => agent.close())
    const next = await agent.send('are you there?')
    expect(next).toMatchObject({ reason: 'completed', text: 'Back again.' })
    // the request carried the call and its answer, in order
    const messages = server.requests.at(-1)!.body!.messages!
    const call = messages.findIndex((m) => m.tool_calls?.[0]?.id === 'call_sleep')
    expect(messages[call + 1]).toMatchObject({ role: 'tool', tool_call_id: 'call_sleep' })
  }, 60_000)
})
