import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent, definePlugin, type PluginEntry, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { readFileTool } from '@keel/fs'
import { type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { userApproval } from '@keel/user-approval'
import { afterEach, describe, expect, it } from 'vitest'
import { hooksPlugin } from '../src/index.js'
import { writeJson } from './helpers.js'
import { cmd, engineFor, project, script } from './scripts.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Project = ReturnType<typeof project>

async function agentFor(p: Project, plugins: PluginEntry[], calls: ScriptedResponse[]) {
  const server = await startScriptedServer({ script: [...calls, { text: 'ok' }] })
  const session = Session.create(`hooks-chain-${Math.random().toString(36).slice(2)}`)
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: p.dir,
    plugins,
    tools: [readFileTool(), bashTool()] as Tool<unknown>[],
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { agent, session }
}

const hooks = (p: Project) =>
  usePlugin(hooksPlugin, { sources: ['claude-project'], trustProject: true, home: p.home })
const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  toolCalls: [{ name, arguments: args }],
})
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [])

describe('the hooks in the one permission chain', () => {
  it('judge the input that runs: a call another plugin rewrites after the hooks allowed it is judged again', async () => {
    const p = project()
    const guard = script(
      p.dir,
      'guard.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nopen(sys.argv[0]+".log","a").write(d["tool_input"]["command"]+"\\n")\nif "rm -rf" in d["tool_input"]["command"]:\n  sys.stderr.write("rm -rf is not allowed")\n  sys.exit(2)',
    )
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [cmd(guard)] }] },
    })
    // After the hooks: turns `ls` into something the guard would refuse.
    const rewriter = definePlugin({
      name: 'rewriter',
      setup(ctx) {
        ctx.intercept({
          beforeTool: () => ({ action: 'allow', input: { command: 'rm -rf build' } }),
        })
      },
    })
    const { agent, session } = await agentFor(p, [hooks(p), rewriter], [call('bash', { command: 'ls' })])
    await agent.send('go')
    const result = session.events.find((e) => e.type === 'tool/result')!.data
    expect(result.errorCode).toBe('HOOK_DENIED')
    expect(lines(join(p.dir, '.hooks', 'guard.py.log'))).toEqual(['ls', 'rm -rf build'])
  })

  it('see every call, also one the sandbox refuses; their allow never lifts it', async () => {
    const p = project()
    const logger = script(
      p.dir,
      'read-log.sh',
      'bash',
      `jq -r .tool_input.file_path >> "$CLAUDE_PROJECT_DIR/reads.log" 2>/dev/null || cat >> "$CLAUDE_PROJECT_DIR/reads.log"; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`,
    )
    writeJson(p.dir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Read', hooks: [cmd(logger)] }] },
    })
    for (const order of ['approval-first', 'hooks-first'] as const) {
      const approval = usePlugin(userApproval({ home: p.home }), {
        approvalPolicy: 'never',
        osSandbox: 'off',
      })
      const plugins = order === 'approval-first' ? [approval, hooks(p)] : [hooks(p), approval]
      const { agent, session } = await agentFor(p, plugins, [call('read_file', { path: '/etc/hosts' })])
      await agent.send('go')
      expect(session.events.find((e) => e.type === 'tool/result')!.data.errorCode, order).toBe(
        'OUTSIDE_WORKSPACE',
      )
      expect(
        session.events.filter((e) => e.type === 'hook/invoked'),
        order,
      ).toHaveLength(1)
    }
    expect(readFileSync(join(p.dir, 'reads.log'), 'utf8')).toContain('/etc/hosts')
  })
})

describe('which handlers run', () => {
  it('Claude Code: an identical command under several matching groups runs once per event; Codex runs each', async () => {
    for (const [dialect, times] of [
      ['claude', 1],
      ['keel', 1],
      ['codex', 2],
    ] as const) {
      const p = project()
      const audit = `echo "$KEEL_PROJECT_DIR" >> ${JSON.stringify(join(p.dir, 'audit.log'))}`
      const { engine, session } = engineFor(
        p,
        {
          PreToolUse: [
            { matcher: 'Bash', hooks: [cmd(audit)] },
            { matcher: '.*', hooks: [cmd(audit)] },
          ],
        },
        dialect,
      )
      session.append('turn/start', { turn: 1 })
      await engine.run({ point: 'PreToolUse', turn: 1, matchValue: 'Bash', fields: {} })
      expect(lines(join(p.dir, 'audit.log')), dialect).toHaveLength(times)
      expect(
        session.events.filter((e) => e.type === 'hook/invoked'),
        dialect,
      ).toHaveLength(times)
    }
  })

  it('Codex-dialect commands get no CLAUDE_PROJECT_DIR (Claude Code and Keel ones do)', async () => {
    for (const [dialect, expected] of [
      ['codex', 'unset'],
      ['claude', 'set'],
      ['keel', 'set'],
    ] as const) {
      const p = project()
      const probe = `if [ -n "\${CLAUDE_PROJECT_DIR+x}" ]; then echo set; else echo unset; fi > ${JSON.stringify(join(p.dir, 'env.txt'))}`
      const { engine, session } = engineFor(p, { SessionStart: [{ hooks: [cmd(probe)] }] }, dialect)
      const previous = process.env.CLAUDE_PROJECT_DIR
      process.env.CLAUDE_PROJECT_DIR = '/somewhere/else'
      try {
        await engine.run({ point: 'SessionStart', matchValue: 'startup', fields: {} })
      } finally {
        if (previous === undefined) delete process.env.CLAUDE_PROJECT_DIR
        else process.env.CLAUDE_PROJECT_DIR = previous
      }
      expect(lines(join(p.dir, 'env.txt')), dialect).toEqual([expected])
      expect(session.events.some((e) => e.type === 'hook/result')).toBe(true)
    }
  })
})
