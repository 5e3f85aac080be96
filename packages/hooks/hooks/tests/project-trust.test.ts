// A repository's settings files are code from the repository: its hooks run only once a
// person approved them for the session. Real agents, real hook processes, the real bash tool.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type ApprovalAnswerer, createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { shellTools } from '@keel/shell'
import { afterEach, describe, expect, it } from 'vitest'
import { hooksPlugin } from '../src/index.js'
import { writeJson } from './helpers.js'
import { cmd, project } from './scripts.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Project = ReturnType<typeof project>

/** A person at the session (the answerer a terminal lends); never asked here. */
const person: ApprovalAnswerer = { name: 'person', kind: 'interactive', answer: () => undefined }

/** The project's hooks: a SessionStart that leaves a mark, a PreToolUse that refuses every bash call. */
function hostileRepo(p: Project): void {
  writeJson(p.dir, '.claude/settings.json', {
    hooks: {
      SessionStart: [{ hooks: [cmd('touch "$CLAUDE_PROJECT_DIR/project-hook-ran"')] }],
      PreToolUse: [{ matcher: 'Bash', hooks: [cmd('echo "the project refuses bash" >&2; exit 2')] }],
    },
  })
  // the user's own hook (in their Keel home) runs whatever the project's answer
  writeJson(join(p.home, '.keel'), 'settings.json', {
    hooks: { SessionStart: [{ hooks: [cmd('touch "$CLAUDE_PROJECT_DIR/user-hook-ran"')] }] },
  })
}

async function agentFor(
  p: Project,
  session: Session,
  script: ScriptedResponse[],
  config: Record<string, unknown> = {},
  answerers: ApprovalAnswerer[] = [person],
) {
  const server = await startScriptedServer({ script })
  const displayed: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: p.dir,
    plugins: [
      usePlugin(hooksPlugin, {
        sources: ['keel-user', 'claude-project'],
        home: p.home,
        keelHome: join(p.home, '.keel'),
        ...config,
      }),
    ],
    tools: shellTools(),
    answerers,
    observers: [{ onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`) }],
  })
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await agent.close()
    await server.close()
  }
  cleanups.push(close)
  return { agent, server, displayed, close }
}

const bash = (command: string): ScriptedResponse => ({
  toolCalls: [{ name: 'bash', arguments: { command } }],
})
const results = (session: Session) =>
  session.events.filter((e) => e.type === 'tool/result').map((e) => e.data.errorCode ?? 'ok')

describe("the project's hooks wait for a person's approval", () => {
  it('held at start (the user’s own run), approved with /hooks approve: they run from the next hook point', async () => {
    const p = project()
    hostileRepo(p)
    const session = Session.create('trust-1')
    const { agent, displayed } = await agentFor(p, session, [
      bash('echo one > one.txt'),
      { text: 'Wrote one.' },
      bash('echo two > two.txt'),
      { text: 'Could not write two.' },
    ])
    expect(existsSync(join(p.dir, 'user-hook-ran'))).toBe(true)
    expect(existsSync(join(p.dir, 'project-hook-ran'))).toBe(false)
    expect(displayed.join('\n')).toContain(
      "this project's settings files define hooks (SessionStart ×1, PreToolUse (Bash) ×1): the project's hooks do not run until you approve them for this session: /hooks approve, or /hooks reject",
    )
    expect(await agent.runCommand('hooks', '', { source: 'user' })).toMatch(
      /^held {2}PreToolUse \(Bash\): echo "the project refuses bash".*\.claude\/settings\.json\)$/mu,
    )
    await agent.send('write one')
    expect(existsSync(join(p.dir, 'one.txt'))).toBe(true)
    const approved = await agent.runCommand('hooks', 'approve', { source: 'user' })
    expect(approved).toContain("approved the project's hooks for this session")
    await agent.send('write two')
    expect(existsSync(join(p.dir, 'two.txt'))).toBe(false)
    expect(results(session)).toEqual(['ok', 'HOOK_DENIED'])
    const answer = session.events.find((e) => e.type === 'hook/project-approval')
    expect(answer?.data).toMatchObject({
      decision: 'approved',
      files: [join(p.dir, '.claude', 'settings.json')],
    })
  })

  it('a resumed session keeps the answer; hooks edited since are held again and said to have changed', async () => {
    const p = project()
    hostileRepo(p)
    const session = Session.create('trust-2')
    const first = await agentFor(p, session, [])
    await first.agent.runCommand('hooks', 'approve', { source: 'user' })
    await first.close()
    // reopened on the same log: the SessionStart (resume) hook runs, no notice
    const again = await agentFor(p, session, [bash('echo x > x.txt'), { text: 'Refused.' }])
    expect(existsSync(join(p.dir, 'project-hook-ran'))).toBe(true)
    expect(again.displayed.join('\n')).not.toContain('/hooks approve')
    await again.agent.send('write x')
    expect(results(session)).toEqual(['HOOK_DENIED'])
    await again.close()
    // the repository changes its hook: the approval was for the old definitions
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [cmd('exit 2')] }] },
    })
    const edited = await agentFor(p, session, [bash('echo y > y.txt'), { text: 'Wrote y.' }])
    expect(edited.displayed.join('\n')).toContain('(they changed since you last answered)')
    await edited.agent.send('write y')
    expect(existsSync(join(p.dir, 'y.txt'))).toBe(true)
  })

  it('/hooks reject keeps them off; trustProject runs them without asking; a bad subcommand is a typed error', async () => {
    const p = project()
    hostileRepo(p)
    const rejecting = await agentFor(p, Session.create('trust-3'), [
      bash('echo r > r.txt'),
      { text: 'Wrote r.' },
    ])
    expect(await rejecting.agent.runCommand('hooks', 'reject', { source: 'user' })).toContain(
      "turned down the project's hooks",
    )
    await rejecting.agent.send('write r')
    expect(existsSync(join(p.dir, 'r.txt'))).toBe(true)
    await expect(rejecting.agent.runCommand('hooks', 'frob', { source: 'user' })).rejects.toMatchObject({
      code: 'HOOK_COMMAND_INVALID',
    })
    await rejecting.close()
    const trusting = await agentFor(
      p,
      Session.create('trust-4'),
      [bash('echo t > t.txt'), { text: 'Refused.' }],
      {
        trustProject: true,
      },
    )
    expect(existsSync(join(p.dir, 'project-hook-ran'))).toBe(true)
    expect(trusting.displayed.join('\n')).not.toContain("project's hooks")
    await trusting.agent.send('write t')
    expect(existsSync(join(p.dir, 't.txt'))).toBe(false)
  })
  it('a session nobody attends (keel -p) does not run them, and says how a preset can trust the project', async () => {
    const p = project()
    hostileRepo(p)
    const session = Session.create('trust-5')
    const { agent, displayed } = await agentFor(
      p,
      session,
      [bash('echo h > h.txt'), { text: 'Wrote h.' }],
      {},
      [],
    )
    expect(displayed.join('\n')).toContain(
      "the project's hooks do not run in a headless session (nobody can approve them): SessionStart ×1, PreToolUse (Bash) ×1; a preset for a project you trust sets trustProject in the hooks config",
    )
    await agent.send('write h')
    expect(existsSync(join(p.dir, 'h.txt'))).toBe(true)
    expect(existsSync(join(p.dir, 'project-hook-ran'))).toBe(false)
  })
  it('a held project cannot switch off the user’s hooks with disableAllHooks; once approved its setting applies', async () => {
    const p = project()
    writeJson(p.dir, '.claude/settings.json', { disableAllHooks: true })
    writeJson(join(p.home, '.keel'), 'settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [cmd('echo "my guard" >&2; exit 2')] }] },
    })
    const session = Session.create('trust-6')
    const { agent } = await agentFor(p, session, [
      bash('echo a > a.txt'),
      { text: 'Refused.' },
      bash('echo b > b.txt'),
      { text: 'Wrote b.' },
    ])
    await agent.send('write a')
    expect(existsSync(join(p.dir, 'a.txt'))).toBe(false)
    expect(await agent.runCommand('hooks', 'approve', { source: 'user' })).toContain('approved')
    await agent.send('write b')
    expect(existsSync(join(p.dir, 'b.txt'))).toBe(true)
    expect(results(session)).toEqual(['HOOK_DENIED', 'ok'])
  })
  it('/hooks with none configured says so, and approve has nothing to approve', async () => {
    const p = project()
    const { agent } = await agentFor(p, Session.create('trust-7'), [])
    expect(await agent.runCommand('hooks', '', { source: 'user' })).toBe(
      'no hooks configured: none of the settings files the hook sources name exists',
    )
    expect(await agent.runCommand('hooks', 'approve', { source: 'user' })).toBe(
      "this project's settings files define no hooks",
    )
  })
})
