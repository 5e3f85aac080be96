// Permission presets inside a real agent with the approval plugin and the file tools, against
// the scripted server: a preset's effect is read from the tool results the server received.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { fsTools } from '@keel/fs'
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { userApproval } from '@keel/user-approval'
import { afterEach, describe, expect, it } from 'vitest'
import { permissionPresetsPlugin } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const toolResults = (r: RecordedRequest): string[] =>
  ((r.body?.messages ?? []) as Array<{ role: string; content?: unknown }>)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content))

async function rig(
  script: ScriptedResponse[],
  session = Session.create('perm'),
  presetsConfig: unknown = {},
) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-perm-')))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const server = await startScriptedServer({ script })
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: dir,
    plugins: [
      usePlugin(userApproval({ home: join(dir, 'home') }), { osSandbox: 'off' }),
      usePlugin(permissionPresetsPlugin, presetsConfig),
    ],
    tools: fsTools(),
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { dir, server, agent, session }
}

const writeA: ScriptedResponse = {
  toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }],
}

describe('permission presets in a real agent', () => {
  it('records the preset, then the knob events it implies, and the next call runs under them', async () => {
    const { server, agent, session } = await rig([writeA, { text: 'no' }, writeA, { text: 'yes' }])
    expect(await agent.runCommand('permissions')).toMatch(
      /^permissions: auto-edit \(approval policy on_request, sandbox mode workspace_write\)\n {2}read-only/,
    )
    expect(await agent.runCommand('permissions', 'read-only')).toBe(
      'permissions: read-only (approval policy on_request, sandbox mode read_only)',
    )
    const types = session.events.map((e) => e.type).filter((t) => !t.startsWith('command/'))
    expect(types).toEqual(['permission/preset', 'approval/policy', 'sandbox/mode'])
    await agent.send('write a.txt')
    expect(toolResults(server.requests[1]!)[0]).toMatch(/^Error \[READ_ONLY_SESSION\]/)

    expect(await agent.runCommand('permissions', 'full-auto')).toContain('auto-edit')
    await agent.send('now write it')
    expect(toolResults(server.requests[3]!).at(-1)).not.toMatch(/^Error/)
    expect(session.events.filter((e) => e.type === 'permission/preset').map((e) => e.data.preset)).toEqual([
      'read-only',
      'auto-edit',
    ])
  })

  it('shows custom once /policy moves a knob off the picked bundle; resume keeps the pick', async () => {
    const { agent, session } = await rig([])
    await agent.runCommand('permissions', 'yolo')
    expect(agent.services.get('permission.preset')!.current()).toMatchObject({
      name: 'full-access',
      picked: true,
    })
    await agent.runCommand('policy', 'strict')
    expect(await agent.runCommand('permissions')).toMatch(
      /^permissions: custom \(approval policy strict, sandbox mode danger_full_access\)/,
    )
    await agent.runCommand('policy', 'never')
    await agent.close()
    const resumed = await rig([], Session.create('perm', {}, JSON.parse(JSON.stringify(session.events))))
    expect(resumed.agent.services.get('permission.preset')!.current()).toEqual({
      name: 'full-access',
      picked: true,
      approvalPolicy: 'never',
      sandboxMode: 'danger_full_access',
    })
  })

  it('refuses an unknown name without touching the log, and takes presets from its config', async () => {
    const { agent, session } = await rig([], Session.create('perm'), {
      presets: { careful: { approvalPolicy: 'strict', sandboxMode: 'read_only', description: 'mine' } },
    })
    await expect(agent.runCommand('permissions', 'sudo')).rejects.toMatchObject({
      code: 'PERMISSION_PRESET_UNKNOWN',
    })
    expect(session.events.filter((e) => !e.type.startsWith('command/'))).toEqual([])
    expect(await agent.runCommand('permissions', 'careful')).toBe(
      'permissions: careful (approval policy strict, sandbox mode read_only)',
    )
  })
})
