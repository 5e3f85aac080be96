import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startScriptedServer } from '@keel/scripted-server'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli, runDemo, writeDemoWorkspace } from '../src/index.js'

function io(env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  return {
    env,
    out: (t: string) => void out.push(t),
    err: (t: string) => void err.push(t),
    stdout: out,
    stderr: err,
  }
}

let home: string
let sessionId: string

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'keel-cli-test-'))
  let printed = ''
  const outcome = await runDemo({
    argv: [],
    env: { KEEL_HOME: home },
    out: {
      write: (t) => {
        printed += t
      },
      color: false,
    },
    err: () => {},
  })
  expect(outcome.exitCode).toBe(0)
  expect(printed).toContain(`sessions show ${outcome.sessionId}`)
  sessionId = outcome.sessionId!
})

describe('keel sessions', () => {
  it('lists the stored sessions under KEEL_HOME', async () => {
    const x = io({ KEEL_HOME: home })
    expect(await runCli(['sessions', 'list'], x)).toBe(0)
    expect(x.stdout.join('')).toContain(sessionId)
    expect(x.stdout.join('')).toContain('keel demo')
  })

  it('shows one session event by event, and as JSON', async () => {
    const x = io({ KEEL_HOME: home })
    expect(await runCli(['sessions', 'show', sessionId], x)).toBe(0)
    const text = x.stdout.join('')
    expect(text).toMatch(/tool\/call\s+edit_file path=greet\.mjs/)
    expect(text).toMatch(/tool\/result\s+bash ✓ PASS/)
    expect(text).toMatch(/turn\/end\s+turn 1 completed/)
    // what each request went to and carried, in words rather than JSON
    expect(text).toMatch(/request\/context\s+turn 1 step 1 · deepseek scripted-demo \(adapter\)/)
    expect(text).toMatch(/request\/header\s+turn 1 step 1 · \d+ tools · max_tokens [\d,]+/)
    const j = io({ KEEL_HOME: home })
    expect(await runCli(['sessions', 'show', sessionId, '--json'], j)).toBe(0)
    const parsed = JSON.parse(j.stdout.join(''))
    expect(parsed.header.id).toBe(sessionId)
    expect(parsed.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  it('reports a missing session with its code and unknown commands in one line', async () => {
    const x = io({ KEEL_HOME: home })
    expect(await runCli(['sessions', 'show', 'no-such-session'], x)).toBe(2)
    expect(x.stderr.join('')).toContain('SESSION_NOT_FOUND')
    const y = io({ KEEL_HOME: home })
    expect(await runCli(['sessions', 'frobnicate'], y)).toBe(2)
    expect(y.stderr.join('')).toBe(
      'keel: keel sessions frobnicate is not a command; keel sessions takes list, show, export, verify or unlock (see keel --help)\n',
    )
    const empty = io({ KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-cli-empty-')) })
    expect(await runCli(['sessions', 'list'], empty)).toBe(0)
    expect(empty.stdout.join('')).toContain('no sessions')
  })

  it('runs a command written after flags (keel --store jsonl sessions list) instead of sending its words to the model', async () => {
    const server = await startScriptedServer({ script: [{ text: 'asked' }] })
    try {
      const env = { KEEL_HOME: home, DEEPSEEK_BASE_URL: server.baseURL, DEEPSEEK_API_KEY: 'sk-test' }
      const listed = io(env)
      expect(await runCli(['--store', 'jsonl', 'sessions', 'list'], listed)).toBe(0)
      expect(listed.stdout.join('')).toContain(sessionId)
      // the command's own flags are checked, as when it comes first
      const wrong = io(env)
      expect(await runCli(['--model', 'deepseek-v4-pro', 'sessions', 'list'], wrong)).toBe(2)
      expect(wrong.stderr.join('')).toBe(
        'keel: keel sessions list: unknown option --model (see keel --help)\n',
      )
      const resumed = io(env)
      expect(await runCli(['-p', '--preset', 'minimal', 'resume', 'no-such-session', 'go on'], resumed)).toBe(
        2,
      )
      expect(resumed.stderr.join('')).toContain('SESSION_NOT_FOUND')
      expect(server.requests).toHaveLength(0)
      // after `--` the words are the task
      const own = await mkdtemp(join(tmpdir(), 'keel-cli-task-'))
      const task = io({ ...env, KEEL_HOME: own })
      expect(await runCli(['-p', '--preset', 'minimal', '--', 'sessions', 'list'], task)).toBe(0)
      expect(task.stdout.join('')).toContain('asked')
      expect(server.requests).toHaveLength(1)
    } finally {
      await server.close()
    }
  })
})

describe('pnpm demo --live', () => {
  it('talks to the endpoint DEEPSEEK_BASE_URL names, with the key, in the given workspace', async () => {
    const server = await startScriptedServer({
      apiKey: 'sk-live-test',
      script: [
        { toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
        { text: 'The workspace has the demo files.' },
      ],
    })
    const workspace = await mkdtemp(join(tmpdir(), 'keel-live-ws-'))
    await writeDemoWorkspace(workspace)
    let printed = ''
    try {
      const outcome = await runDemo({
        argv: ['--live', 'What is in the workspace?', '--cwd', workspace, '--model', 'deepseek-v4-pro'],
        env: { KEEL_HOME: home, DEEPSEEK_API_KEY: 'sk-live-test', DEEPSEEK_BASE_URL: server.baseURL },
        out: {
          write: (t) => {
            printed += t
          },
          color: false,
        },
        err: () => {},
      })
      expect(outcome.exitCode).toBe(0)
      expect(outcome.workspace).toBe(workspace)
    } finally {
      await server.close()
    }
    expect(printed).toContain('DeepSeek (deepseek-v4-pro)')
    expect(printed).toContain('> you: What is in the workspace?')
    expect(printed).toContain('The workspace has the demo files.')
    expect(server.requests).toHaveLength(2)
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-live-test')
    expect(server.requests[0]!.body!.model).toBe('deepseek-v4-pro')
    expect(JSON.stringify(server.requests[1]!.body!.messages)).toContain('greet.mjs')
  })
})
