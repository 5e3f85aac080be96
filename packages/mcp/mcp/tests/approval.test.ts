// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are what these tests are about
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { dirs, FIXTURE, mcpRig, offered } from './helpers.js'

function projectServers(project: string, args: string[] = ['--noise']): void {
  writeFileSync(
    join(project, '.mcp.json'),
    JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: [FIXTURE, ...args] } } }),
  )
}

describe("a project's .mcp.json servers run only once a person approved them", () => {
  it('not started until /mcp approve; the approval is logged, survives resume, and binds to the entry', async () => {
    const d = dirs()
    projectServers(d.project)
    const r = await mcpRig({ ...d, config: { projectServers: true }, script: [{ text: 'no tools yet' }] })
    expect(r.notices.join('\n')).toContain(
      'defines servers that are not used until you approve them for this session: proj',
    )
    await r.agent.send('hi')
    expect(offered(r.llm.requests[0]!.body)).toEqual([])
    expect(r.events('mcp/servers')[0]!.data.servers[0]).toMatchObject({
      name: 'proj',
      state: 'needs-approval',
    })
    // It never ran: its stderr log was never written.
    const log = join(d.home, 'logs', 'mcp', 'proj.log')
    expect(existsSync(log)).toBe(false)

    const answer = await r.agent.runCommand('mcp', 'approve proj')
    expect(answer).toMatch(/proj\s+project\s+stdio\s+connected\s+9 tools/u)
    expect(existsSync(log)).toBe(true)
    const types = r.types()
    const run = types.lastIndexOf('command/run')
    expect(types.slice(run, run + 3)).toEqual(['command/run', 'mcp/project-approval', 'command/done'])
    expect(r.events('mcp/project-approval')[0]!.data).toMatchObject({
      server: 'proj',
      decision: 'approved',
      source: join(d.project, '.mcp.json'),
      configDigest: expect.stringMatching(/^sha256:/u),
    })
    r.llm.enqueue({ text: 'now with tools' })
    await r.agent.send('again')
    expect(offered(r.llm.requests.at(-1)!.body)).toContain('mcp__proj__echo')

    // Resumed: the log's approval holds, no question.
    const resumed = Session.create(
      r.session.id,
      { cwd: d.project },
      JSON.parse(JSON.stringify(r.session.events)),
    )
    const again = await mcpRig({
      ...d,
      session: resumed,
      config: { projectServers: true },
      script: [{ text: 'still' }],
    })
    expect(again.notices.join('\n')).not.toContain('approve')
    await again.agent.send('resumed')
    expect(offered(again.llm.requests[0]!.body)).toContain('mcp__proj__echo')

    // The entry changed (other arguments): asked again.
    projectServers(d.project, ['--variant', '2'])
    const edited = Session.create(
      r.session.id,
      { cwd: d.project },
      JSON.parse(JSON.stringify(resumed.events)),
    )
    const changed = await mcpRig({ ...d, session: edited, config: { projectServers: true } })
    expect(changed.notices.join('\n')).toContain('changed since last answered')
    expect(changed.agent.services.get('mcp.servers')!.status()[0]!.state).toBe('needs-approval')
  })

  it('/mcp reject turns a server down for the session; approving a non-project server is refused', async () => {
    const d = dirs()
    projectServers(d.project)
    const r = await mcpRig({
      ...d,
      config: { projectServers: true, mcpServers: { mine: { command: process.execPath, args: [FIXTURE] } } },
    })
    expect(await r.agent.runCommand('mcp', 'reject proj')).toMatch(/proj\s+project\s+stdio\s+rejected/u)
    expect(r.events('mcp/project-approval')[0]!.data.decision).toBe('rejected')
    await expect(r.agent.runCommand('mcp', 'approve mine')).rejects.toMatchObject({
      code: 'MCP_COMMAND_INVALID',
    })
    await expect(r.agent.runCommand('mcp', 'approve nobody')).rejects.toMatchObject({
      code: 'MCP_COMMAND_INVALID',
    })
    await expect(r.agent.runCommand('mcp', 'frobnicate')).rejects.toMatchObject({
      code: 'MCP_COMMAND_INVALID',
    })
    const resumed = Session.create(
      r.session.id,
      { cwd: d.project },
      JSON.parse(JSON.stringify(r.session.events)),
    )
    const again = await mcpRig({ ...d, session: resumed, config: { projectServers: true } })
    expect(
      again.agent.services
        .get('mcp.servers')!
        .status()
        .find((s) => s.name === 'proj')!.state,
    ).toBe('rejected')
    expect(again.notices.join('\n')).not.toContain('approve them')
  })

  it('headless: project servers are not used, with a notice', async () => {
    const d = dirs()
    projectServers(d.project)
    const session = Session.create(`mcp-headless-${process.pid}`, {
      cwd: d.project,
      agentComposition: { preset: 'headless', plugins: [], tools: [], interactive: false },
    })
    const r = await mcpRig({ ...d, session, config: { projectServers: true }, script: [{ text: 'done' }] })
    expect(r.notices.join('\n')).toContain("the project's servers are not used in a headless session")
    await r.agent.send('go')
    expect(offered(r.llm.requests[0]!.body)).toEqual([])
  })

  it('/mcp lists every server with its state, and says where a config problem is', async () => {
    const d = dirs()
    writeFileSync(
      join(d.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { proj: { command: 'x' }, broken: { url: 'https://example.com' } } }),
    )
    const r = await mcpRig({
      ...d,
      config: {
        projectServers: true,
        mcpServers: { fx: { command: process.execPath, args: [FIXTURE], env: { T: '${UNSET_TOKEN}' } } },
      },
    })
    await r.agent.services.get('mcp.servers')!.ready()
    const text = (await r.agent.runCommand('mcp', ''))!
    expect(text).toMatch(/^fx\s+preset\s+stdio\s+connected\s+9 tools \(keel-fixture 1\.1\.0\)$/mu)
    expect(text).toMatch(/^proj\s+project\s+stdio\s+needs approval$/mu)
    expect(text).toContain('not set: ${UNSET_TOKEN} (left as written)')
    expect(text).toContain(
      `config: ${join(d.project, '.mcp.json')} $.mcpServers.broken.type: an entry with "url" needs "type": "http" or "sse"; entry skipped`,
    )
    expect(r.notices.join('\n')).toContain('$.mcpServers.broken.type')
  })
})
