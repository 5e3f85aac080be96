import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { call, dirs, fixtureEntry, mcpRig, offered, until } from './helpers.js'

describe('stdio: a real MCP server as a child process', () => {
  it('its tools join the agent as mcp__<server>__<tool>; calls run on the server; results become content blocks', async () => {
    const d = dirs()
    const r = await mcpRig({
      ...d,
      config: { mcpServers: { fx: fixtureEntry('--noise') } },
      script: [
        call('c1', 'mcp__fx__echo', { text: 'hi', times: 2 }),
        call('c2', 'mcp__fx__picture'),
        call('c3', 'mcp__fx__fail'),
        call('c4', 'mcp__fx__echo', { text: '' }),
        { text: 'done' },
      ],
    })
    expect((await r.agent.send('go')).reason).toBe('completed')
    expect(offered(r.llm.requests[0]!.body)).toEqual([
      'mcp__fx__echo',
      'mcp__fx__whoami',
      'mcp__fx__bare',
      'mcp__fx__picture',
      'mcp__fx__big',
      'mcp__fx__fail',
      'mcp__fx__crash',
      'mcp__fx__hang',
      'mcp__fx__grow',
    ])
    const results = r.events('tool/result').map((e) => e.data)
    expect(results[0]!.message.content).toEqual([{ type: 'text', text: 'hi hi' }])
    expect(results[1]!.message.content).toEqual([
      { type: 'text', text: 'here it is' },
      { type: 'image', mediaType: 'image/png', data: expect.stringMatching(/^iVBOR/u) },
      { type: 'text', text: '[resource file:///notes.txt (text/plain)]\nthe notes' },
      { type: 'text', text: '[resource link file:///big.bin "big.bin" (application/octet-stream)]' },
    ])
    expect(results[2]).toMatchObject({ errorCode: 'MCP_TOOL_ERROR' })
    expect(JSON.stringify(results[2]!.message.content)).toContain('the widget is broken')
    // Invalid arguments are refused against the server's schema; the server never sees them.
    expect(results[3]).toMatchObject({ errorCode: 'TOOL_INPUT_INVALID' })
    expect(JSON.stringify(results[3]!.message.content)).toContain(
      '- text: must NOT have fewer than 1 characters',
    )
    // The server's stderr went to the bounded log, not to the terminal.
    const log = readFileSync(join(d.home, 'logs', 'mcp', 'fx.log'), 'utf8')
    expect(log).toContain('fixture starting (variant 1)')
    expect(log).toContain('echo called with hi')
    expect(log).not.toContain('echo called with \n')
    // The step was sent with the server, recorded.
    expect(r.events('mcp/servers')[0]!.data.servers).toEqual([
      {
        name: 'fx',
        scope: 'preset',
        transport: 'stdio',
        state: 'connected',
        tools: 9,
        server: { name: 'keel-fixture', version: '1.1.0' },
      },
    ])
  })

  it('output over the cap is stored aside like any tool output', async () => {
    const r = await mcpRig({
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__big', { chars: 100_000 }), { text: 'done' }],
    })
    await r.agent.send('go')
    const result = r.events('tool/result')[0]!.data
    expect(result.storedAside?.chars).toBe(100_000)
    expect(existsSync(result.storedAside!.path)).toBe(true)
    expect(JSON.stringify(result.message.content).length).toBeLessThan(40_000)
  })

  it('a server that crashes mid-call gives a coded result, is restarted with back-off, and serves the next call', async () => {
    const r = await mcpRig({
      config: {
        mcpServers: { fx: fixtureEntry() },
        restart: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 40, stableAfterMs: 60_000 },
      },
      script: [call('c1', 'mcp__fx__crash'), call('c2', 'mcp__fx__echo', { text: 'back' }), { text: 'done' }],
    })
    expect((await r.agent.send('go')).reason).toBe('completed')
    const [crashed, after] = r.events('tool/result').map((e) => e.data)
    expect(crashed).toMatchObject({ errorCode: 'MCP_SERVER_CRASHED' })
    const text = JSON.stringify(crashed!.message.content)
    expect(text).toContain("MCP server 'fx' exited while crash ran")
    expect(text).toContain('about to crash')
    expect(after!.message.content).toEqual([{ type: 'text', text: 'back' }])
    // The step after the crash was sent while it restarted, or after it was back: either is recorded.
    const states = r.events('mcp/servers').map((e) => e.data.servers[0]!.state)
    expect(states[0]).toBe('connected')
    expect(r.agent.services.get('mcp.servers')!.status()[0]!.state).toBe('connected')
  })

  it('a server that keeps crashing is given up on: its tools are withdrawn, the model told, the log says so', async () => {
    const d = dirs()
    const marker = join(d.home, 'crashed')
    const r = await mcpRig({
      ...d,
      config: {
        mcpServers: { fx: fixtureEntry('--once', marker) },
        restart: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10, stableAfterMs: 60_000 },
      },
      script: [call('c1', 'mcp__fx__crash'), { text: 'after' }],
    })
    const service = r.agent.services.get('mcp.servers')!
    const turn = r.agent.send('go')
    await until(() => service.status()[0]!.state === 'failed', 'the server to be given up on')
    await turn
    r.llm.enqueue({ text: 'without it' })
    await r.agent.send('next')
    const failed = service.status()[0]!
    expect(failed.error).toMatchObject({ code: 'MCP_CONNECT_FAILED' })
    expect(failed.error!.message).toContain('refusing to start again')
    expect(failed.tools).toEqual([])
    expect(offered(r.llm.requests.at(-1)!.body)).toEqual([])
    const last = r.events('tool/list-changed').at(-1)!.data
    expect(last.tools).toEqual([])
    const told = r.events('developer/message').at(-1)!.data.message.content[0]!.text
    expect(told).toContain('No longer available (do not call them): mcp__fx__echo')
    expect(r.events('mcp/servers').at(-1)!.data.servers[0]).toMatchObject({ state: 'failed', tools: 0 })
    // /mcp reconnect tries again (and fails again: the marker is still there).
    const answer = await r.agent.runCommand('mcp', 'reconnect fx')
    expect(answer).toContain('failed')
  })

  it('a hung call is cut by the per-call timeout and by the turn abort', async () => {
    const started: string[] = []
    const r = await mcpRig({
      config: { mcpServers: { fx: { ...fixtureEntry(), timeout: 300 }, slow: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__hang'), call('c2', 'mcp__slow__hang')],
      observers: [{ onToolCallStarted: (i) => started.push(i.call.id) }],
    })
    const turn = r.agent.send('go')
    await until(() => started.includes('c2'), 'the second hang to start')
    r.agent.abort()
    expect((await turn).reason).toBe('aborted')
    const [timedOut, aborted] = r.events('tool/result').map((e) => e.data)
    expect(timedOut).toMatchObject({ errorCode: 'TOOL_TIMEOUT' })
    expect(JSON.stringify(timedOut!.message.content)).toContain('0.3 s deadline')
    expect(aborted).toMatchObject({ errorCode: 'TOOL_ABORTED' })
    // Both servers still answer after their calls were cancelled.
    r.llm.enqueue(call('c3', 'mcp__fx__echo', { text: 'still here' }), { text: 'ok' })
    await r.agent.send('again')
    expect(r.events('tool/result').at(-1)!.data.message.content).toEqual([
      { type: 'text', text: 'still here' },
    ])
  })

  it('tools/list_changed: the next step is offered the new list, and the log says so', async () => {
    const r = await mcpRig({
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__grow'), call('c2', 'mcp__fx__extra'), { text: 'done' }],
    })
    await r.agent.send('go')
    expect(offered(r.llm.requests[0]!.body)).not.toContain('mcp__fx__extra')
    expect(offered(r.llm.requests[1]!.body)).toContain('mcp__fx__extra')
    expect(r.events('tool/result')[1]!.data.message.content).toEqual([{ type: 'text', text: 'extra!' }])
    const lists = r.events('tool/list-changed').map((e) => e.data)
    expect(lists.map((l) => [l.step, l.tools.length])).toEqual([
      [1, 9],
      [2, 10],
    ])
    expect(lists[1]!.tools.at(-1)!.name).toBe('mcp__fx__extra')
    expect(r.events('mcp/servers').at(-1)!.data.servers[0]!.tools).toBe(10)
  })

  it('a server that never answers the handshake fails at its startup timeout and is stopped', async () => {
    const d = dirs()
    const pidFile = join(d.home, 'silent.pid')
    const silent = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
    const r = await mcpRig({
      ...d,
      config: {
        mcpServers: { mute: { command: process.execPath, args: ['-e', silent], startupTimeout: 300 } },
      },
      script: [{ text: 'without it' }],
    })
    await r.agent.send('go')
    expect(r.events('mcp/servers')[0]!.data.servers[0]).toMatchObject({
      state: 'failed',
      error: { code: 'MCP_STARTUP_TIMEOUT' },
    })
    const pid = Number(readFileSync(pidFile, 'utf8'))
    await until(() => !alive(pid), 'the silent server to be stopped')
  })

  it('closing the agent during a handshake stops the child instead of leaving it running', async () => {
    const d = dirs()
    const pidFile = join(d.home, 'slow.pid')
    const r = await mcpRig({
      ...d,
      config: { mcpServers: { slow: silentServer(pidFile) } },
    })
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '', 'the child to start')
    const pid = Number(readFileSync(pidFile, 'utf8'))
    await r.agent.close()
    await until(() => !alive(pid), 'the child to be stopped')
  })
})

/** A process that writes its pid to `pidFile` and never speaks MCP. */
function silentServer(pidFile: string) {
  const script = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
  return { command: process.execPath, args: ['-e', script] }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false // ESRCH: the process is gone
  }
}
