import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createAgent, type PluginEntry, usePlugin } from '@keel/agent'
import { answerWith } from '@keel/agent/testing'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { readFileTool, writeFileTool } from '@keel/fs'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { userApproval } from '@keel/user-approval'
import { afterEach, describe, expect, it } from 'vitest'
import { hooksPlugin } from '../src/index.js'
import { alive, eventually, readPids, SLOW_HOOK, writeJson } from './helpers.js'
import { cmd, project, script } from './scripts.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Project = ReturnType<typeof project>
type Order = 'hooks-first' | 'approval-first'
const ORDERS: readonly Order[] = ['hooks-first', 'approval-first']

/**
 * A hook script (bash) that logs each run to `<project>/runs.log` and answers with
 * `decision` through `hookSpecificOutput.permissionDecision` (`deny` exits 2 with stderr,
 * as guards usually do).
 */
function hookAnswering(p: Project, decision: 'allow' | 'deny' | 'ask'): void {
  const body =
    decision === 'deny'
      ? 'echo run >> "$CLAUDE_PROJECT_DIR/runs.log"; echo "the guard refuses this" >&2; exit 2'
      : `echo run >> "$CLAUDE_PROJECT_DIR/runs.log"; echo '${JSON.stringify({
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: decision,
            permissionDecisionReason: `the guard says ${decision}`,
          },
        })}'`
  const guard = script(p.dir, 'guard.sh', 'bash', body)
  writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(guard)] }] } })
}

const runs = (p: Project): number =>
  existsSync(join(p.dir, 'runs.log'))
    ? readFileSync(join(p.dir, 'runs.log'), 'utf8').split('\n').length - 1
    : 0

/**
 * A real agent: scripted model over HTTP, real fs tools and an unwrapped `bash` (OS sandbox
 * off, so `on_request` asks before every command), the approval plugin, a person answering
 * `answers` in order (each question's reason goes to `prompts`), and the hooks plugin reading
 * `<project>/.claude/settings.json`.
 */
async function agentFor(
  p: Project,
  order: Order,
  script: ScriptedResponse[],
  answers: Array<'allow' | 'deny'> = [],
) {
  mkdirSync(p.dir, { recursive: true })
  const server: ScriptedServer = await startScriptedServer({ script })
  const session = Session.create(`hooks-approval-${Math.random().toString(36).slice(2)}`)
  let prompts = ''
  const person = answerWith((question) => {
    prompts += `${question.reason}\n`
    return answers.shift() ?? 'deny'
  }, 'terminal')
  const approval: PluginEntry = usePlugin(userApproval({ home: p.home }), { osSandbox: 'off' })
  const hooks: PluginEntry = usePlugin(hooksPlugin, {
    sources: ['claude-project'],
    trustProject: true,
    home: p.home,
  })
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: p.dir,
    plugins: order === 'hooks-first' ? [hooks, approval] : [approval, hooks],
    tools: [readFileTool(), writeFileTool(), bashTool()] as Tool<unknown>[],
    answerers: [person],
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { agent, session, prompts: () => prompts }
}

const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  toolCalls: [{ name, arguments: args }],
})

function results(session: Session) {
  return session.events.flatMap((e) => (e.type === 'tool/result' ? [e.data] : []))
}

function toolTexts(session: Session): string[] {
  return results(session).map((r) => r.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''))
}

function approvals(session: Session): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = []
  for (const e of session.events) {
    if (e.type === 'approval/asked') out.push({ type: e.type, reason: e.data.reason })
    if (e.type === 'approval/decided') {
      const { outcome, by, answerer } = e.data
      out.push({ type: e.type, outcome, by, ...(answerer === undefined ? {} : { answerer }) })
    }
  }
  return out
}

describe('PreToolUse hooks beside the approval plugin, one permission chain (real agent, real hook scripts)', () => {
  for (const order of ORDERS) {
    describe(order, () => {
      it('hook deny: the command (asked about) and the write (allowed) never run; the deny is final, nobody is asked', async () => {
        const p = project()
        hookAnswering(p, 'deny')
        const { agent, session, prompts } = await agentFor(p, order, [
          call('bash', { command: 'touch ran.txt' }),
          call('write_file', { path: 'written.txt', content: 'x' }),
          { text: 'ok' },
        ])
        await agent.send('go')
        expect(existsSync(join(p.dir, 'ran.txt'))).toBe(false)
        expect(existsSync(join(p.dir, 'written.txt'))).toBe(false)
        expect(results(session).map((r) => r.errorCode)).toEqual(['HOOK_DENIED', 'HOOK_DENIED'])
        expect(toolTexts(session).every((t) => t.includes('the guard refuses this'))).toBe(true)
        expect(approvals(session)).toEqual([])
        expect(prompts()).toBe('')
        expect(runs(p)).toBe(2)
      })

      it('hook allow on an ask: runs without asking the terminal, once per call', async () => {
        const p = project()
        hookAnswering(p, 'allow')
        const { agent, session, prompts } = await agentFor(p, order, [
          call('bash', { command: 'touch ran.txt' }),
          { text: 'ok' },
        ])
        await agent.send('go')
        expect(existsSync(join(p.dir, 'ran.txt'))).toBe(true)
        expect(results(session).map((r) => r.errorCode)).toEqual([undefined])
        expect(approvals(session)).toEqual([
          { type: 'approval/asked', reason: expect.any(String) },
          { type: 'approval/decided', outcome: 'allowed-once', by: 'hook', answerer: '@keel/hooks' },
        ])
        expect(prompts()).toBe('')
        expect(runs(p)).toBe(1)
        expect(session.events.filter((e) => e.type === 'hook/invoked')).toHaveLength(1)
      })

      it('hook allow never lifts the sandbox: a write outside the workspace is still refused', async () => {
        const p = project()
        hookAnswering(p, 'allow')
        const outside = join(dirname(p.dir), 'outside.txt')
        const { agent, session, prompts } = await agentFor(p, order, [
          call('write_file', { path: '../outside.txt', content: 'x' }),
          call('write_file', { path: outside, content: 'x' }),
          { text: 'ok' },
        ])
        await agent.send('go')
        expect(existsSync(outside)).toBe(false)
        expect(results(session).map((r) => r.errorCode)).toEqual(['OUTSIDE_WORKSPACE', 'OUTSIDE_WORKSPACE'])
        expect(approvals(session)).toEqual([])
        expect(prompts()).toBe('')
        // PreToolUse hooks see every call, also one the sandbox refuses (Claude Code's order)
        expect(runs(p)).toBe(2)
      })

      it('aborting the turn while the approval chain waits on a hook kills the hook; the question is cancelled', async () => {
        const p = project()
        const slow = script(p.dir, 'slow.sh', 'bash', SLOW_HOOK)
        writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(slow)] }] } })
        const { agent, session, prompts } = await agentFor(p, order, [
          call('bash', { command: 'touch ran.txt' }),
          { text: 'ok' },
        ])
        const controller = new AbortController()
        const turn = agent.send('go', { signal: controller.signal })
        const pidFile = join(p.dir, 'pids')
        expect(await eventually(() => readPids(pidFile).length === 2, 30_000)).toBe(true)
        controller.abort()
        expect((await turn).reason).toBe('aborted')
        for (const pid of readPids(pidFile)) expect(await eventually(() => !alive(pid))).toBe(true)
        expect(existsSync(join(p.dir, 'ran.txt'))).toBe(false)
        expect(prompts()).toBe('')
        const decided = session.events.filter((e) => e.type === 'approval/decided').map((e) => e.data.outcome)
        expect(decided).toEqual(['cancelled'])
      }, 60_000)

      it('hook ask falls through to the interactive answerer, also on a call the policy allowed', async () => {
        const p = project()
        hookAnswering(p, 'ask')
        const { agent, session, prompts } = await agentFor(
          p,
          order,
          [
            call('bash', { command: 'touch ran.txt' }),
            call('write_file', { path: 'written.txt', content: 'x' }),
            { text: 'ok' },
          ],
          ['allow', 'deny'],
        )
        await agent.send('go')
        expect(existsSync(join(p.dir, 'ran.txt'))).toBe(true)
        expect(existsSync(join(p.dir, 'written.txt'))).toBe(false)
        expect(results(session).map((r) => r.errorCode)).toEqual([undefined, 'USER_REJECTED'])
        expect(approvals(session)).toEqual([
          { type: 'approval/asked', reason: expect.any(String) },
          { type: 'approval/decided', outcome: 'allowed-once', by: 'user', answerer: 'terminal' },
          { type: 'approval/asked', reason: 'the guard says ask' },
          { type: 'approval/decided', outcome: 'rejected', by: 'user', answerer: 'terminal' },
        ])
        expect(prompts()).toContain('the guard says ask')
        expect(runs(p)).toBe(2)
      })

      it('a hook rewriting a write_file path: inside the workspace it writes there; outside it is still refused', async () => {
        const p = project()
        const outside = join(dirname(p.dir), 'smuggled.txt')
        const rewrite = script(
          p.dir,
          'rewrite.py',
          'python3',
          [
            'import json,sys',
            'd=json.load(sys.stdin)',
            'i=dict(d["tool_input"])',
            `i["file_path"]={"inside.txt":"moved.txt","escape.txt":${JSON.stringify(outside)}}[i["file_path"].rsplit("/",1)[-1]]`,
            'print(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":i}}))',
          ].join('\n'),
        )
        writeJson(p.dir, '.claude/settings.json', {
          hooks: { PreToolUse: [{ matcher: 'Write', hooks: [cmd(rewrite)] }] },
        })
        const { agent, session, prompts } = await agentFor(p, order, [
          call('write_file', { path: 'inside.txt', content: 'x' }),
          call('write_file', { path: 'escape.txt', content: 'x' }),
          { text: 'ok' },
        ])
        await agent.send('go')
        expect(existsSync(join(p.dir, 'inside.txt'))).toBe(false)
        expect(readFileSync(join(p.dir, 'moved.txt'), 'utf8')).toBe('x')
        expect(existsSync(outside)).toBe(false)
        expect(existsSync(join(p.dir, 'escape.txt'))).toBe(false)
        expect(results(session).map((r) => r.errorCode)).toEqual([undefined, 'OUTSIDE_WORKSPACE'])
        const rewritten = session.events.flatMap((e) =>
          e.type === 'tool/input-rewritten' ? [JSON.parse(e.data.arguments).path] : [],
        )
        expect(rewritten).toEqual(['moved.txt', outside])
        expect(prompts()).toBe('')
        expect(session.events.filter((e) => e.type === 'hook/invoked')).toHaveLength(2)
      })

      it('a hook rewriting a bash command the approval plugin asks about: the rewrite is what gets approved and run', async () => {
        const p = project()
        const rewrite = script(
          p.dir,
          'rewrite.py',
          'python3',
          'import json,sys\nd=json.load(sys.stdin)\nc=d["tool_input"]["command"].replace("original","rewritten")\nprint(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"rewritten by the guard","updatedInput":{"command":c}}}))',
        )
        writeJson(p.dir, '.claude/settings.json', { hooks: { PreToolUse: [{ hooks: [cmd(rewrite)] }] } })
        const { agent, session, prompts } = await agentFor(p, order, [
          call('bash', { command: 'touch original.txt' }),
          { text: 'ok' },
        ])
        await agent.send('go')
        expect(existsSync(join(p.dir, 'original.txt'))).toBe(false)
        expect(existsSync(join(p.dir, 'rewritten.txt'))).toBe(true)
        expect(prompts()).toBe('')
        // whatever the order, the vote that counts is about the rewritten command: one question
        const asked = session.events.flatMap((e) => (e.type === 'approval/asked' ? [e.data.reason] : []))
        expect(asked).toEqual([expect.stringContaining('touch rewritten.txt')])
        expect(
          session.events.filter((e) => e.type === 'approval/decided').map((e) => e.data.outcome),
        ).toEqual(asked.map(() => 'allowed-once'))
        expect(session.events.filter((e) => e.type === 'hook/invoked')).toHaveLength(1)
      })
    })
  }
})
