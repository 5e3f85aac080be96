import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fixtureEntry, mcpRig } from './helpers.js'

describe('stdio: a real MCP server as a child process', () => {
  it('its tools join the agent as mcp__<server>__<tool> and a call runs on the server', async () => {
    const r = await mcpRig({
      config: { mcpServers: { fx: fixtureEntry('--noise') } },
      script: [
        { toolCalls: [{ id: 'c1', name: 'mcp__fx__echo', arguments: '{"text":"hi","times":2}' }] },
        { text: 'done' },
      ],
    })
    const result = await r.agent.send('go')
    expect(result.reason).toBe('completed')
    const names = (r.llm.requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map(
      (t) => t.function.name,
    )
    expect(names).toContain('mcp__fx__echo')
    const out = r.events('tool/result')[0]!.data
    expect(out.message.content).toEqual([{ type: 'text', text: 'hi hi' }])
    console.log(r.types())
    console.log(r.notices)
  })
})
