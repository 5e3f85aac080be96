// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are what these tests are about
import { describe, expect, it } from 'vitest'
import { call, httpFixture, mcpRig, offered, until } from './helpers.js'

describe('HTTP: a real MCP server on loopback', () => {
  it('Streamable HTTP: tools, calls, list_changed over the session stream (offered from the first step after it arrived)', async () => {
    const { url } = await httpFixture('--http')
    const r = await mcpRig({
      env: { PATH: process.env.PATH, FX_TOKEN: 'abc' },
      config: {
        mcpServers: { web: { type: 'http', url, headers: { Authorization: 'Bearer ${FX_TOKEN}' } } },
      },
      script: [
        call('c1', 'mcp__web__echo', { text: 'over http' }),
        call('c2', 'mcp__web__grow'),
        call('c4', 'mcp__web__whoami'),
        { text: 'grown' },
      ],
    })
    expect((await r.agent.send('go')).reason).toBe('completed')
    const service = r.agent.services.get('mcp.servers')!
    // Over HTTP the notification comes on the session's own stream, unordered with the
    // call's answer: it reaches the tool list at the first step boundary after it arrived.
    await until(() => service.status()[0]!.tools.includes('mcp__web__extra'), 'the new tool list')
    r.llm.enqueue(call('c3', 'mcp__web__extra'), { text: 'done' })
    await r.agent.send('again')
    const results = r.events('tool/result').map((e) => e.data.message.content)
    expect(results[0]).toEqual([{ type: 'text', text: 'over http' }])
    expect(results[2]).toEqual([{ type: 'text', text: 'Bearer abc' }])
    expect(results[3]).toEqual([{ type: 'text', text: 'extra!' }])
    expect(offered(r.llm.requests.at(-2)!.body)).toContain('mcp__web__extra')
    const status = r.agent.services.get('mcp.servers')!.status()[0]!
    expect(status).toMatchObject({ transport: 'http', state: 'connected', target: url })
    // A remote tool reaches off this machine whatever its hints say.
    expect(r.agent.tools.find((t) => t.name === 'mcp__web__echo')!.annotations.openWorld).toBe(true)
  })

  it('an `http` entry whose server only speaks the old HTTP+SSE transport falls back to SSE', async () => {
    const { url } = await httpFixture('--sse')
    const r = await mcpRig({
      config: { mcpServers: { old: { type: 'http', url } } },
      script: [call('c1', 'mcp__old__echo', { text: 'via sse' }), { text: 'done' }],
    })
    await r.agent.send('go')
    expect(r.events('tool/result')[0]!.data.message.content).toEqual([{ type: 'text', text: 'via sse' }])
  })

  it('a server that goes away mid-session: the call gets a coded result and the server is retried with back-off', async () => {
    const fixture = await httpFixture('--http')
    const r = await mcpRig({
      config: {
        mcpServers: { web: { type: 'http', url: fixture.url } },
        restart: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10, stableAfterMs: 60_000 },
      },
      script: [call('c1', 'mcp__web__echo', { text: 'one' })],
    })
    const service = r.agent.services.get('mcp.servers')!
    await service.ready()
    fixture.child.kill('SIGKILL')
    await until(
      () => fixture.child.exitCode !== null || fixture.child.signalCode !== null,
      'the fixture to die',
    )
    r.llm.enqueue({ text: 'done' })
    await r.agent.send('go')
    const result = r.events('tool/result')[0]!.data
    expect(['MCP_SERVER_CRASHED', 'MCP_SERVER_UNAVAILABLE']).toContain(result.errorCode)
    await until(() => service.status()[0]!.state === 'failed', 'the server to be given up on')
    expect(service.status()[0]!.error!.code).toBe('MCP_CONNECT_FAILED')
  })

  it('a server that refuses the connection fails with a coded error and offers nothing', async () => {
    const r = await mcpRig({
      config: { mcpServers: { gone: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } },
      script: [{ text: 'hi' }],
    })
    await r.agent.send('go')
    expect(offered(r.llm.requests[0]!.body)).toEqual([])
    expect(r.events('mcp/servers')[0]!.data.servers[0]).toMatchObject({
      name: 'gone',
      state: 'failed',
      error: { code: 'MCP_CONNECT_FAILED' },
    })
  })
})
