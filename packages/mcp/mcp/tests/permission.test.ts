import { usePlugin } from '@keel/agent'
import { answerWith } from '@keel/agent/testing'
import { Session } from '@keel/session'
import { userApproval } from '@keel/user-approval'
import { describe, expect, it } from 'vitest'
import { call, dirs, fixtureEntry, mcpRig } from './helpers.js'

function approval(approvalPolicy: 'on_request' | 'never' = 'on_request') {
  return usePlugin(userApproval(), { approvalPolicy, sandboxMode: 'workspace_write', osSandbox: 'off' })
}

describe('MCP tools in the one permission chain (workspace_write)', () => {
  it('a tool without annotations is asked about; a read-only closed-world one is not', async () => {
    const asked: string[] = []
    const r = await mcpRig({
      plugins: [approval()],
      answerers: [
        answerWith((q) => {
          asked.push(`${q.toolName}: ${q.reason}`)
          return q.toolName === 'mcp__fx__bare' ? 'allow' : 'deny'
        }),
      ],
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [
        call('c1', 'mcp__fx__echo', { text: 'free' }),
        call('c2', 'mcp__fx__bare', { n: 1 }),
        call('c3', 'mcp__fx__whoami'),
        { text: 'done' },
      ],
    })
    await r.agent.send('go')
    expect(asked).toEqual([
      'mcp__fx__bare: mcp__fx__bare reaches the network, which is off in workspace_write',
      'mcp__fx__whoami: mcp__fx__whoami reaches the network, which is off in workspace_write',
    ])
    const results = r.events('tool/result').map((e) => e.data)
    expect(results[0]!.message.content).toEqual([{ type: 'text', text: 'free' }])
    expect(results[1]!.message.content).toEqual([{ type: 'text', text: 'bare 1' }])
    expect(results[2]).toMatchObject({ errorCode: 'USER_REJECTED' })
    expect(r.events('approval/asked').map((e) => e.data.toolName)).toEqual([
      'mcp__fx__bare',
      'mcp__fx__whoami',
    ])
  })

  it('headless, the same call fails closed: nobody can answer', async () => {
    const d = dirs()
    const session = Session.create(`mcp-perm-headless-${process.pid}`, {
      cwd: d.project,
      agentComposition: { preset: 'headless', plugins: [], tools: [], interactive: false },
    })
    const r = await mcpRig({
      ...d,
      session,
      plugins: [approval()],
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__bare', { n: 1 }), { text: 'done' }],
    })
    await r.agent.send('go')
    expect(r.events('tool/result')[0]!.data).toMatchObject({ errorCode: 'APPROVAL_UNAVAILABLE' })
    expect(r.events('approval/decided')[0]!.data).toMatchObject({ outcome: 'unavailable', by: 'none' })
  })

  it('under approval policy never it is refused without asking', async () => {
    const r = await mcpRig({
      plugins: [approval('never')],
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__bare', { n: 1 }), { text: 'done' }],
    })
    await r.agent.send('go')
    expect(r.events('tool/result')[0]!.data).toMatchObject({ errorCode: 'NETWORK_DISABLED' })
    expect(r.events('approval/asked')).toEqual([])
  })
})
