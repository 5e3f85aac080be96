import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ApprovalAnswerer, createAgent, definePlugin, type PluginEntry, usePlugin } from '@keel/agent'
import { answerWith } from '@keel/agent/testing'
import { isKeelError } from '@keel/base'
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

/** A real agent with the real bash tool, the hooks plugin reading only `<project>/.claude/settings.json`. */
async function agentFor(
  p: Project,
  script: ScriptedResponse[],
  options: {
    config?: Record<string, unknown>
    before?: PluginEntry[]
    after?: PluginEntry[]
    answerers?: ApprovalAnswerer[]
  } = {},
) {
  const server: ScriptedServer = await startScriptedServer({ script })
  const session = Session.create(`hooks-agent-${Math.random().toString(36).slice(2)}`)
  const displayed: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: p.dir,
    plugins: [
      ...(options.before ?? []),
      usePlugin(hooksPlugin, {
        sources: ['claude-project'],
        trustProject: true,
        home: p.home,
        ...options.config,
      }),
      ...(options.after ?? []),
    ],
    tools: shellTools(),
    observers: [{ onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`) }],
    ...(options.answerers ? { answerers: options.answerers } : {}),
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { server, agent, session, displayed }
}

const bash = (command: string): ScriptedResponse => ({
  toolCalls: [{ name: 'bash', arguments: { command } }],
})
type Messages = Array<{ role: string; content: string }>
const messagesOf = (server: ScriptedServer, i: number) =>
  (server.requests[i]!.body as { messages: Messages }).messages

describe('hooks inside a real agent', () => {
  it('a PreToolUse hook blocks a bash call, which never runs; the model gets the reason; events are logged', async () => {
    const p = project()
    const guard = script(
      p.dir,
      'guard.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nif "pwned" in d["tool_input"]["command"]:\n  sys.stderr.write("writing pwned files is forbidden")\n  sys.exit(2)',
    )
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [cmd(guard)] }] },
    })
    const { server, agent, session } = await agentFor(p, [
      bash('touch pwned.txt'),
      bash('touch allowed.txt'),
      { text: 'Done.' },
    ])
    const result = await agent.send('Make the files.')
    expect(result.text).toBe('Done.')
    expect(existsSync(join(p.dir, 'pwned.txt'))).toBe(false)
    expect(existsSync(join(p.dir, 'allowed.txt'))).toBe(true)
    const results = session.events.filter((e) => e.type === 'tool/result').map((e) => e.data)
    expect(results[0]).toMatchObject({ errorCode: 'HOOK_DENIED' })
    expect(results[1]!.errorCode).toBeUndefined()
    const toModel = messagesOf(server, 1).find((m) => m.role === 'tool')!.content
    expect(toModel).toContain('writing pwned files is forbidden')
    const hookEvents = session.events.filter((e) => e.type === 'hook/result').map((e) => e.data)
    expect(hookEvents.map((d) => [d.turn, d.point, d.decision, d.exitCode])).toEqual([
      [1, 'PreToolUse', 'deny', 2],
      [1, 'PreToolUse', 'none', 0],
    ])
    expect(session.events.filter((e) => e.type === 'hook/invoked')).toHaveLength(2)
  })

  it('a hook ask fails closed without an answerer', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', {
      hooks: {
        PreToolUse: [
          {
            hooks: [
              cmd(
                printsJson({
                  hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'touches disk' },
                }),
              ),
            ],
          },
        ],
      },
    })
    const { agent, session } = await agentFor(p, [bash('touch asked.txt'), { text: 'ok' }])
    await agent.send('go')
    expect(existsSync(join(p.dir, 'asked.txt'))).toBe(false)
    expect(session.events.find((e) => e.type === 'tool/result')!.data).toMatchObject({
      errorCode: 'APPROVAL_UNAVAILABLE',
    })
  })

  it("the hooks answer another plugin's approval question in the agent's chain, running them once per call", async () => {
    // Stands in for the approval plugin: asks about every call.
    const askAll = definePlugin({
      name: 'ask-all',
      setup(ctx) {
        ctx.intercept({ beforeTool: () => ({ action: 'ask', reason: 'policy asks' }) })
      },
    })
    for (const order of ['approval-first', 'hooks-first'] as const) {
      const p = project()
      const allow = {
        hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: 'trusted' },
      }
      const counted = script(
        p.dir,
        'allow.sh',
        'bash',
        `echo run >> "$CLAUDE_PROJECT_DIR/runs.log"; echo '${JSON.stringify(allow)}'`,
      )
      writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(counted)] }] } })
      const rig = await agentFor(p, [bash('touch approved.txt'), { text: 'ok' }], {
        ...(order === 'approval-first' ? { before: [askAll] } : { after: [askAll] }),
      })
      const session = rig.session
      await rig.agent.send('go')
      expect(existsSync(join(p.dir, 'approved.txt')), order).toBe(true)
      expect(session.events.find((e) => e.type === 'approval/decided')?.data, order).toMatchObject({
        outcome: 'allowed-once',
        by: 'hook',
        answerer: '@keel/hooks',
        reason: 'trusted',
      })
      expect(readFileSync(join(p.dir, 'runs.log'), 'utf8'), order).toBe('run\n')
      expect(
        session.events.filter((e) => e.type === 'hook/invoked'),
        order,
      ).toHaveLength(1)
    }
  })

  it('a hook allow never overrides a deny from another plugin (the sandbox), in either order', async () => {
    const sandbox = definePlugin({
      name: 'sandbox-stand-in',
      setup(ctx) {
        ctx.intercept({
          beforeTool: () => ({
            action: 'deny',
            reason: 'outside the workspace',
            errorCode: 'OUTSIDE_WORKSPACE',
          }),
        })
      },
    })
    for (const order of ['sandbox-first', 'hooks-first'] as const) {
      const p = project()
      writeJson(p.dir, '.claude/settings.json', {
        hooks: {
          PreToolUse: [{ hooks: [cmd(printsJson({ hookSpecificOutput: { permissionDecision: 'allow' } }))] }],
        },
      })
      const { agent, session } = await agentFor(p, [bash('touch escaped.txt'), { text: 'ok' }], {
        ...(order === 'sandbox-first' ? { before: [sandbox] } : { after: [sandbox] }),
        answerers: [answerWith(() => 'allow')],
      })
      await agent.send('go')
      expect(existsSync(join(p.dir, 'escaped.txt')), order).toBe(false)
      expect(session.events.find((e) => e.type === 'tool/result')!.data.errorCode, order).toBe(
        'OUTSIDE_WORKSPACE',
      )
    }
  })

  it('aborting the turn kills a running PreToolUse hook (its whole process group); the call never runs', async () => {
    const p = project()
    const slow = script(p.dir, 'slow.sh', 'bash', SLOW_HOOK)
    writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(slow)] }] } })
    const { agent, session } = await agentFor(p, [bash('touch ran.txt'), { text: 'ok' }])
    const controller = new AbortController()
    const turn = agent.send('go', { signal: controller.signal })
    const pidFile = join(p.dir, 'pids')
    expect(await eventually(() => readPids(pidFile).length === 2, 30_000)).toBe(true)
    controller.abort()
    const result = await turn
    expect(result.reason).toBe('aborted')
    for (const pid of readPids(pidFile)) expect(await eventually(() => !alive(pid))).toBe(true)
    expect(existsSync(join(p.dir, 'ran.txt'))).toBe(false)
    expect(session.events.find((e) => e.type === 'hook/result')!.data).toMatchObject({
      point: 'PreToolUse',
      decision: 'cancelled',
    })
  }, 60_000)

  it('PostToolUse feedback reaches the model beside the result', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', {
      hooks: {
        PostToolUse: [
          { matcher: 'Bash', hooks: [cmd('echo "format check failed: run prettier" >&2; exit 2')] },
        ],
      },
    })
    const { server, agent, session } = await agentFor(p, [bash('echo hi'), { text: 'ok' }])
    await agent.send('go')
    expect(session.events.find((e) => e.type === 'tool/result')!.data.errorCode).toBeUndefined()
    const next = messagesOf(server, 1)
    expect(next.find((m) => m.role === 'tool')!.content).toContain('hi')
    expect(next.some((m) => m.content.includes('format check failed: run prettier'))).toBe(true)
  })

  it('a Stop hook keeps the turn going, stop_hook_active is reported truthfully, and the cap ends a loop', async () => {
    const p = project()
    const stopper = script(
      p.dir,
      'stop.js',
      'node',
      [
        "const fs = require('fs')",
        "let s = ''",
        "process.stdin.on('data', (c) => (s += c))",
        "process.stdin.on('end', () => {",
        '  const d = JSON.parse(s)',
        "  fs.appendFileSync(process.env.CLAUDE_PROJECT_DIR + '/stops.log', String(d.stop_hook_active) + '\\n')",
        "  process.stderr.write('not done yet: keep working')",
        '  process.exit(2)',
        '})',
      ].join('\n'),
    )
    writeJson(p.dir, '.claude/settings.json', { hooks: { Stop: [{ hooks: [cmd(stopper)] }] } })
    const { agent, session, displayed } = await agentFor(
      p,
      [{ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'four' }],
      { config: { stopHookCap: 2 } },
    )
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'three' })
    const continuations = session.events.filter(
      (e) => e.type === 'user/message' && e.data.source === 'plugin/@keel/hooks',
    )
    expect(
      continuations.map(
        (e) => (e.data as { message: { content: Array<{ text: string }> } }).message.content[0]!.text,
      ),
    ).toEqual(['not done yet: keep working', 'not done yet: keep working'])
    expect(readFileSync(join(p.dir, 'stops.log'), 'utf8')).toBe('false\ntrue\ntrue\n')
    expect(displayed.some((d) => d.includes('kept the turn going 2 times'))).toBe(true)
  })

  it('the Stop cap counts continuations in a row without tool use; stop_hook_active stays true for the turn', async () => {
    const p = project()
    const stopper = script(
      p.dir,
      'stop.sh',
      'bash',
      'input=$(cat); case "$input" in *\'"stop_hook_active":true\'*) echo true ;; *) echo false ;; esac >> "$CLAUDE_PROJECT_DIR/stops.log"; echo "again" >&2; exit 2',
    )
    writeJson(p.dir, '.claude/settings.json', { hooks: { Stop: [{ hooks: [cmd(stopper)] }] } })
    const { agent } = await agentFor(
      p,
      [{ text: 'one' }, bash('echo progress'), { text: 'two' }, { text: 'three' }],
      {
        config: { stopHookCap: 1 },
      },
    )
    const result = await agent.send('go')
    // one → continue; a tool call resets the count; two → continue again; three → cap reached
    expect(result.text).toBe('three')
    expect(readFileSync(join(p.dir, 'stops.log'), 'utf8')).toBe('false\ntrue\ntrue\n')
  })

  it('continue:false from a hook ends the turn', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ hooks: [cmd(printsJson({ continue: false, stopReason: 'quota reached' }))] }] },
    })
    const { agent, session } = await agentFor(p, [bash('touch x.txt'), { text: 'never' }])
    const result = await agent.send('go')
    expect(result.reason).toBe('rejected')
    expect(existsSync(join(p.dir, 'x.txt'))).toBe(false)
    expect(session.events.find((e) => e.type === 'tool/result')!.data).toMatchObject({
      errorCode: 'HOOK_HALTED',
    })
  })

  it("a hook rewriting a bash command runs the rewritten command; the log keeps the model's call and records the rewrite", async () => {
    const p = project()
    const rewrite = script(
      p.dir,
      'rewrite.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nc=d["tool_input"]["command"].replace("original","rewritten")\nprint(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":c}}}))',
    )
    writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(rewrite)] }] } })
    const { server, agent, session } = await agentFor(p, [
      bash('touch original.txt && echo made original.txt'),
      bash('touch same.txt'),
      { text: 'ok' },
    ])
    await agent.send('go')
    expect(existsSync(join(p.dir, 'original.txt'))).toBe(false)
    expect(existsSync(join(p.dir, 'rewritten.txt'))).toBe(true)
    expect(existsSync(join(p.dir, 'same.txt'))).toBe(true)
    const calls = session.events.filter((e) => e.type === 'tool/call').map((e) => e.data)
    expect(JSON.parse(calls[0]!.arguments)).toEqual({
      command: 'touch original.txt && echo made original.txt',
    })
    const rewrites = session.events.filter((e) => e.type === 'tool/input-rewritten').map((e) => e.data)
    expect(rewrites).toHaveLength(1)
    expect(rewrites[0]).toMatchObject({ callId: calls[0]!.callId, plugin: '@keel/hooks' })
    expect(JSON.parse(rewrites[0]!.arguments)).toMatchObject({
      command: 'touch rewritten.txt && echo made rewritten.txt',
    })
    const results = session.events.filter((e) => e.type === 'tool/result').map((e) => e.data)
    expect(results.map((r) => r.errorCode)).toEqual([undefined, undefined])
    expect(messagesOf(server, 1).find((m) => m.role === 'tool')!.content).toContain('made rewritten.txt')
    // The hook ran once per call, although the chain ran again on the rewrite.
    expect(session.events.filter((e) => e.type === 'hook/invoked')).toHaveLength(2)
  })

  it('a hook rewrite the tool does not accept is denied (HOOK_INPUT_INVALID); nothing runs', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', {
      hooks: {
        PreToolUse: [
          {
            hooks: [
              cmd(
                printsJson({
                  hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 42 } },
                }),
              ),
            ],
          },
        ],
      },
    })
    const { agent, session } = await agentFor(p, [bash('touch ran.txt'), { text: 'ok' }])
    await agent.send('go')
    expect(existsSync(join(p.dir, 'ran.txt'))).toBe(false)
    expect(session.events.find((e) => e.type === 'tool/result')!.data.errorCode).toBe('HOOK_INPUT_INVALID')
  })

  it('a bad hook settings file stops the agent from starting, naming the file and path', async () => {
    const p = project()
    const file = writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout: 'soon' }] }] },
    })
    const failed = await agentFor(p, []).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isKeelError(failed, 'PLUGIN_SETUP_FAILED')).toBe(true)
    const cause = (failed as Error).cause
    expect(isKeelError(cause, 'HOOK_CONFIG_INVALID')).toBe(true)
    expect((cause as Error).message).toContain(`${file}: hooks.PreToolUse[0].hooks[0].timeout`)
  })
})
