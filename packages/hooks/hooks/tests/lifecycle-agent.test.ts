import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent, definePlugin, type PluginContext, type PluginEntry, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { shellTools } from '@keel/shell'
import { afterEach, describe, expect, it } from 'vitest'
import { hooksPlugin } from '../src/index.js'
import { alive, eventually, readPids, SLOW_HOOK, writeJson } from './helpers.js'
import { cmd, printsJson, project, script } from './scripts.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Project = ReturnType<typeof project>

/** Stands in for a compaction plugin: keeps its context so a test can call `ctx.trigger`. */
function compactorStandIn(): { plugin: PluginEntry; host: () => PluginContext<unknown>['trigger'] } {
  let host: PluginContext<unknown>['trigger'] | undefined
  const plugin = definePlugin({
    name: 'compactor-stand-in',
    setup(ctx) {
      host = ctx.trigger
    },
  })
  return { plugin, host: () => host! }
}

/** A real agent (scripted model over HTTP, real bash) with the hooks plugin reading `<project>/.claude/settings.json`. */
async function agentFor(
  p: Project,
  script: ScriptedResponse[],
  options: { session?: Session; after?: PluginEntry[] } = {},
) {
  const server: ScriptedServer = await startScriptedServer({ script })
  const session = options.session ?? Session.create(`hooks-life-${Math.random().toString(36).slice(2)}`)
  const displayed: string[] = []
  const notices: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: p.dir,
    plugins: [
      usePlugin(hooksPlugin, { sources: ['claude-project'], trustProject: true, home: p.home }),
      ...(options.after ?? []),
    ],
    tools: shellTools(),
    observers: [
      {
        onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`),
        onNotice: (n) => notices.push(`${n.code}: ${n.message}`),
      },
    ],
  })
  let closed = false
  cleanups.push(async () => {
    if (!closed) await agent.close()
    await server.close()
  })
  const close = async () => {
    closed = true
    await agent.close()
  }
  return { server, agent, session, displayed, notices, close }
}

type Messages = Array<{ role: string; content: string }>
const messagesOf = (server: ScriptedServer, i: number) =>
  (server.requests[i]!.body as { messages: Messages }).messages
const hookResults = (session: Session) =>
  session.events.flatMap((e) => (e.type === 'hook/result' ? [e.data] : []))

/** A hook (bash) that appends its stdin's `field` to `<project>/<log>` and prints `out`. */
function logging(p: Project, name: string, field: string, out = ''): string {
  return script(
    p.dir,
    name,
    'python3',
    [
      'import json,sys,os',
      'd=json.load(sys.stdin)',
      `open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"],"${name}.log"),"a").write(str(d["${field}"])+"\\n")`,
      `sys.stdout.write(${JSON.stringify(out)})`,
    ].join('\n'),
  )
}
const logOf = (p: Project, name: string) => readFileSync(join(p.dir, `${name}.log`), 'utf8')

describe('session-level hooks inside a real agent', () => {
  it('SessionStart runs with startup, then resume on a reopened history; its stdout reaches the model', async () => {
    const p = project()
    const start = logging(p, 'start', 'source', 'Project notes: use pnpm.')
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { SessionStart: [{ matcher: 'startup|resume', hooks: [cmd(start)] }] },
    })
    const first = await agentFor(p, [{ text: 'ok' }])
    expect(logOf(p, 'start')).toBe('startup\n')
    await first.agent.send('hi')
    const sent = messagesOf(first.server, 0)
    expect(sent.some((m) => m.content.includes('Project notes: use pnpm.'))).toBe(true)
    expect(hookResults(first.session)[0]).toMatchObject({ point: 'SessionStart', decision: 'context' })
    await first.close()
    await agentFor(p, [], { session: first.session })
    expect(logOf(p, 'start')).toBe('startup\nresume\n')
  })

  it('UserPromptSubmit: a block keeps the prompt from the log and the model and tells the user why; context and plain stdout reach the model', async () => {
    const p = project()
    const guard = script(
      p.dir,
      'guard.py',
      'python3',
      [
        'import json,sys',
        'd=json.load(sys.stdin)',
        'if "password" in d["prompt"]:',
        '  sys.stderr.write("the prompt contains a secret")',
        '  sys.exit(2)',
        'print(json.dumps({"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ticket KEEL-7 is open"}}))',
      ].join('\n'),
    )
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { UserPromptSubmit: [{ hooks: [cmd(guard), cmd('echo "today is Monday"')] }] },
    })
    const { server, agent, session, displayed, notices } = await agentFor(p, [{ text: 'done' }])
    const blocked = await agent.send('my password is hunter2')
    expect(blocked).toMatchObject({ reason: 'rejected', error: { code: 'PROMPT_BLOCKED' } })
    expect(blocked.error!.message).toContain('the prompt contains a secret')
    expect(notices.some((n) => n.includes('the prompt contains a secret'))).toBe(true)
    expect(displayed.some((d) => d.includes('the prompt contains a secret'))).toBe(true)
    expect(server.requests).toHaveLength(0)
    expect(JSON.stringify(session.events)).not.toContain('hunter2')
    const ok = await agent.send('fix the bug')
    expect(ok.reason).toBe('completed')
    const sent = messagesOf(server, 0)
    const user = sent.findIndex((m) => m.role === 'user' && m.content.includes('fix the bug'))
    const context = sent.findIndex((m) => m.content.includes('ticket KEEL-7 is open'))
    expect(user).toBeGreaterThanOrEqual(0)
    expect(context).toBeGreaterThan(user)
    expect(sent.some((m) => m.content.includes('today is Monday'))).toBe(true)
  })

  it('SessionEnd runs on agent.close() and its hook events are still logged', async () => {
    const p = project()
    const end = logging(p, 'end', 'reason')
    writeJson(p.dir, '.claude/settings.json', { hooks: { SessionEnd: [{ hooks: [cmd(end)] }] } })
    const { session, close } = await agentFor(p, [])
    expect(existsSync(join(p.dir, 'end.log'))).toBe(false)
    await close()
    expect(logOf(p, 'end')).toBe('prompt_input_exit\n')
    expect(hookResults(session)).toMatchObject([{ point: 'SessionEnd', decision: 'none', exitCode: 0 }])
    expect(session.events.at(-1)!.type).toBe('hook/result')
  })

  it('PreCompact through host.beforeCompaction can cancel; SessionStart runs with compact through host.sessionStart', async () => {
    const p = project()
    const preCompact = script(
      p.dir,
      'precompact.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nif d["custom_instructions"]=="drop everything":\n  sys.stderr.write("keep the design notes")\n  sys.exit(2)',
    )
    const start = logging(p, 'start', 'source', 'Re-read DESIGN.md after compaction.')
    writeJson(p.dir, '.claude/settings.json', {
      hooks: {
        PreCompact: [{ matcher: 'manual', hooks: [cmd(preCompact)] }],
        SessionStart: [{ matcher: 'compact', hooks: [cmd(start)] }],
      },
    })
    const compactor = compactorStandIn()
    const { server, agent } = await agentFor(p, [{ text: 'ok' }], { after: [compactor.plugin] })
    expect(existsSync(join(p.dir, 'start.log'))).toBe(false)
    expect(
      await compactor.host().beforeCompaction({ trigger: 'manual', instructions: 'drop everything' }),
    ).toEqual({ decision: { action: 'cancel', reason: 'keep the design notes' }, plugin: '@keel/hooks' })
    expect(await compactor.host().beforeCompaction({ trigger: 'manual', instructions: 'be brief' })).toEqual({
      decision: { action: 'proceed', instructions: 'be brief' },
    })
    const added = await compactor.host().sessionStart({ source: 'compact' })
    expect(added).toEqual([{ plugin: '@keel/hooks', text: 'Re-read DESIGN.md after compaction.' }])
    expect(logOf(p, 'start')).toBe('compact\n')
    await agent.send('continue')
    expect(messagesOf(server, 0).some((m) => m.content.includes('Re-read DESIGN.md after compaction.'))).toBe(
      true,
    )
  })

  for (const point of ['UserPromptSubmit', 'Stop'] as const) {
    it(`aborting the turn kills a running ${point} hook (its whole process group)`, async () => {
      const p = project()
      const slow = script(p.dir, 'slow.sh', 'bash', SLOW_HOOK)
      writeJson(p.dir, '.claude/settings.json', { hooks: { [point]: [{ hooks: [cmd(slow)] }] } })
      const { agent, session } = await agentFor(p, [{ text: 'ok' }])
      const controller = new AbortController()
      const turn = agent.send('go', { signal: controller.signal })
      const pidFile = join(p.dir, 'pids')
      expect(await eventually(() => readPids(pidFile).length === 2, 30_000)).toBe(true)
      controller.abort()
      expect((await turn).reason).toBe('aborted')
      for (const pid of readPids(pidFile)) expect(await eventually(() => !alive(pid))).toBe(true)
      expect(hookResults(session).find((r) => r.point === point)).toMatchObject({ decision: 'cancelled' })
    }, 60_000)
  }

  it('a UserPromptSubmit hook that prints JSON with an ignored field still accepts the prompt', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { UserPromptSubmit: [{ hooks: [cmd(printsJson({ suppressOutput: true }))] }] },
    })
    const { agent } = await agentFor(p, [{ text: 'ok' }])
    expect((await agent.send('hello')).reason).toBe('completed')
  })
})
