import type { ScriptedResponse } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel, writeAskingPreset } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
})
async function rig(...script: ScriptedResponse[]): Promise<KeelRig> {
  const r = await keelRig(script)
  rigs.push(r)
  return r
}
const base = (r: KeelRig) => ['--base-url', r.server.baseURL, '--cwd', r.cwd]
const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>

describe('keel -p says what happened, and only that', { timeout: 120_000 }, () => {
  it('a refused tool call is said on stderr and listed in permission_denials', async () => {
    const r = await rig(
      { text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > made.txt' } }] },
      { text: 'It was refused.' },
    )
    await writeAskingPreset(r.home)
    const run = await runKeel(['-p', 'make a file', '--preset', 'asking', '--output', 'json', ...base(r)], {
      env: r.env,
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/^keel: refused bash \(APPROVAL_UNAVAILABLE\): /mu)
    const result = JSON.parse(run.stdout) as { permission_denials: unknown[] }
    expect(result.permission_denials).toEqual([
      {
        tool_name: 'bash',
        tool_use_id: expect.any(String),
        tool_input: { command: 'echo hi > made.txt' },
        code: 'APPROVAL_UNAVAILABLE',
        message: expect.stringContaining('bash was not run'),
      },
    ])
  })

  it('a failed turn prints nothing on stdout in text mode (not the partial answer), exit 1', async () => {
    const cut: ScriptedResponse = {
      text: 'This answer will never be finished',
      chunking: { text: 4 },
      fault: { type: 'cut', afterChunks: 3 },
    }
    const r = await rig(cut, cut, cut, cut)
    const run = await runKeel(['-p', 'q', ...base(r)], { env: r.env })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain('keel: the turn ended error: LLM_STREAM_CUT')
  })

  it('retries and their waits are said on stderr; a give-up reads as one sentence', async () => {
    const r = await rig({ fault: { type: 'rate-limit', retryAfter: 1 } }, { text: 'answered' })
    const run = await runKeel(['-p', 'q', ...base(r)], { env: r.env })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('answered\n')
    expect(run.stderr).toMatch(
      /^keel: the model call failed \(LLM_RATE_LIMIT: .*\); retrying in 1.0 s as the server asked \(attempt 2\)$/mu,
    )
    const down = await rig(...Array<ScriptedResponse>(4).fill({ fault: { type: 'server-error' } }))
    const failed = await runKeel(['-p', 'q', ...base(down)], { env: down.env })
    expect(failed.code).toBe(1)
    expect(failed.stderr.match(/retrying in/gu)).toHaveLength(3)
    expect(failed.stderr).toContain('your request (gave up after 4 attempts).')
    expect(failed.stderr).not.toContain('..')
  })

  it('--idle-timeout (and KEEL_IDLE_TIMEOUT_MS) ends a stalled stream so the retry comes quickly', async () => {
    const stall: ScriptedResponse = { text: 'stalled answer', fault: { type: 'stall', afterChunks: 1 } }
    const r = await rig(stall, { text: 'after the stall' }, stall, { text: 'after the second stall' })
    const flag = await runKeel(['-p', 'q', '--idle-timeout', '300ms', ...base(r)], { env: r.env })
    expect(flag.stdout).toBe('after the stall\n')
    expect(flag.stderr).toMatch(/the model call failed \(LLM_STREAM_IDLE: .*300 ms/u)
    const env = await runKeel(['-p', 'q', ...base(r)], { env: { ...r.env, KEEL_IDLE_TIMEOUT_MS: '300' } })
    expect(env.stdout).toBe('after the second stall\n')
    const bad = await runKeel(['-p', 'q', '--idle-timeout', 'soon', ...base(r)], { env: r.env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe(
      'keel: --idle-timeout must be a duration such as 30s, 2m or 500ms, got "soon" (see keel --help)\n',
    )
  })

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal} ends the turn, closes the log, prints a result with status interrupted, exits ${code}`, async () => {
      const r = await rig({ text: 'x'.repeat(400), chunking: { text: 1 }, delayMs: 50 })
      let sent = false
      const run = await runKeel(['-p', 'slow', '--output', 'stream-json', ...base(r)], {
        env: r.env,
        onStdout: (out, child) => {
          if (!sent && out.includes('"turn/start"')) {
            sent = true
            setTimeout(() => child.kill(signal), 300)
          }
        },
      })
      expect(run.signal).toBeNull()
      expect(run.code).toBe(code)
      expect(lastLine(run.stdout)).toMatchObject({ type: 'result', status: 'interrupted', signal })
      expect(run.stderr).toContain(`keel: interrupted by ${signal}`)
      const id = lastLine(run.stdout).session_id as string
      // the log was closed by this process: no open turn left for the next open to repair
      const inspection = await new JsonlStore({ home: r.home }).inspect(id)
      expect(inspection.interruptedTurn).toBeUndefined()
      expect(inspection.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    })
  }

  it('piped stdin is the task, or the context put before it', async () => {
    const r = await rig({ text: 'one' }, { text: 'two' })
    const alone = await runKeel(['-p', ...base(r)], { env: r.env, input: 'summarize this\n' })
    expect(alone.code).toBe(0)
    expect(alone.stdout).toBe('one\n')
    const user = (i: number) =>
      JSON.stringify(r.server.requests[i]!.body!.messages!.filter((m) => m.role === 'user').at(-1))
    expect(user(0)).toContain('summarize this')
    const context = await runKeel(['-p', 'what is the total?', ...base(r)], {
      env: r.env,
      input: 'a,1\nb,2\n',
    })
    expect(context.stdout).toBe('two\n')
    expect(user(1)).toContain(JSON.stringify('a,1\nb,2\n\nwhat is the total?'))
  })
})
