// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` references are what these tests are about
import { execFileSync } from 'node:child_process'
import { rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { collectServers, expandText, readServerFile } from '../src/index.js'
import { resolveServer } from '../src/spec.js'
import { dirs } from './helpers.js'

describe('environment expansion (as Claude Code does it)', () => {
  const env = { HOME: '/home/ada', EMPTY: '', TOKEN: 's3cret' }
  it.each([
    ['${HOME}/bin', '/home/ada/bin', []],
    ['${UNSET:-fallback}', 'fallback', []],
    ['${EMPTY:-fallback}', 'fallback', []],
    ['${HOME:-fallback}', '/home/ada', []],
    ['${UNSET}', '${UNSET}', ['UNSET']],
    ['Bearer ${TOKEN}', 'Bearer s3cret', []],
    ['${UNSET:-}', '', []],
    ['$HOME and ${ NOT }', '$HOME and ${ NOT }', []],
    ['${A}${A}${B}', '${A}${A}${B}', ['A', 'B']],
    ['${API_BASE_URL:-https://api.example.com}/mcp', 'https://api.example.com/mcp', []],
  ])('%s → %s', (input, text, missing) => {
    expect(expandText(input, env)).toEqual({ text, missing })
  })

  it('text without a reference is unchanged, and expansion is one pass (a value is never expanded again)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (plain, value) => {
        const noRef = plain.replaceAll('${', '')
        expect(expandText(noRef, { V: value }).text).toBe(noRef)
        expect(expandText('<${V}>', { V: value, W: 'no' }).text).toBe(`<${value}>`)
      }),
      { seed: 42, numRuns: 200 },
    )
  })
})

describe('server configuration', () => {
  it('reads .mcp.json leniently: broken entries are skipped and named by file and JSON path, the rest load', () => {
    const { project } = dirs()
    const file = join(project, '.mcp.json')
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          good: { command: 'node', args: ['server.js'], env: { KEY: '${KEY}' }, oauth: {} },
          remote: { type: 'http', url: 'https://example.com/mcp', headers: { A: 'b' } },
          noType: { url: 'https://example.com/mcp' },
          socket: { type: 'ws', url: 'ws://x' },
          'bad name': { command: 'x' },
          noCommand: { args: ['x'] },
          badArgs: { command: 'x', args: 'not-a-list' },
        },
      }),
    )
    const { servers, problems } = readServerFile(file, 'project')
    expect(servers.map((s) => s.name)).toEqual(['good', 'remote'])
    expect(servers[0]!.entry).toEqual({ command: 'node', args: ['server.js'], env: { KEY: '${KEY}' } })
    expect(servers[0]!.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$.mcpServers.good.oauth: "oauth" is not supported by Keel and is ignored',
      '$.mcpServers.noType.type: an entry with "url" needs "type": "http" or "sse"; entry skipped',
      '$.mcpServers.socket.type: WebSocket servers are not supported; entry skipped',
      '$.mcpServers["bad name"]: server names use 1–64 of A-Z a-z 0-9 - _; entry skipped',
      expect.stringMatching(/^\$\.mcpServers\.noCommand\.command: .*; entry skipped$/u),
      expect.stringMatching(/^\$\.mcpServers\.badArgs\.args: .*; entry skipped$/u),
    ])
    for (const p of problems) expect(p.source).toBe(file)
  })

  it('a file that is not JSON is one problem; a missing one is none', () => {
    const { project, home } = dirs()
    writeFileSync(join(project, '.mcp.json'), '{ "mcpServers": { ')
    const { servers, problems } = collectServers({ projectDir: project, keelHome: home })
    expect(servers).toEqual([])
    expect(problems).toHaveLength(1)
    expect(problems[0]!.message).toMatch(/^not valid JSON/u)
  })

  it('preset over project over user: the whole entry of the winner, no merging', () => {
    const { project, home } = dirs()
    writeFileSync(
      join(project, '.mcp.json'),
      JSON.stringify({ mcpServers: { a: { command: 'project-a' }, b: { command: 'project-b' } } }),
    )
    writeFileSync(
      join(home, 'mcp.json'),
      JSON.stringify({ mcpServers: { b: { command: 'user-b', args: ['x'] }, c: { command: 'user-c' } } }),
    )
    const { servers } = collectServers({
      projectDir: project,
      keelHome: home,
      preset: { a: { command: 'preset-a' } },
    })
    expect(servers.map((s) => [s.name, s.scope, s.entry])).toEqual([
      ['a', 'preset', { command: 'preset-a' }],
      ['b', 'project', { command: 'project-b' }],
      ['c', 'user', { command: 'user-c' }],
    ])
  })

  it('resolving expands command, args, env, url and headers; an unset variable is left and reported', () => {
    const { project } = dirs()
    const env = { BIN: '/opt/bin', TOKEN: 't0k' }
    const stdio = resolveServer(
      {
        name: 's',
        scope: 'user',
        source: 'x',
        digest: 'sha256:0',
        entry: {
          command: '${BIN}/srv',
          args: ['--token', '${TOKEN}', '${NOPE}'],
          env: { T: '${TOKEN}' },
          cwd: 'sub',
        },
      },
      env,
      project,
    )
    expect(stdio.transport).toEqual({
      kind: 'stdio',
      command: '/opt/bin/srv',
      args: ['--token', 't0k', '${NOPE}'],
      env: { T: 't0k' },
      cwd: join(project, 'sub'),
    })
    expect(stdio.missing).toEqual(['NOPE'])
    const http = resolveServer(
      {
        name: 'h',
        scope: 'user',
        source: 'x',
        digest: 'sha256:0',
        entry: {
          type: 'http',
          url: '${BASE:-https://api.example.com}/mcp',
          headers: { Authorization: 'Bearer ${TOKEN}' },
        },
      },
      env,
      project,
    )
    expect(http.transport).toEqual({
      kind: 'http',
      url: 'https://api.example.com/mcp',
      headers: { Authorization: 'Bearer t0k' },
    })
    const broken = resolveServer(
      {
        name: 'h',
        scope: 'user',
        source: 'x',
        digest: 'sha256:0',
        entry: { type: 'sse', url: '${BASE}/sse' },
      },
      env,
      project,
    )
    expect(broken.problem).toMatch(/not a valid URL \(unset: BASE\)/u)
  })
})

describe('a server file that is not a regular file (a cloned repository can hold a symbolic link)', () => {
  it('a link to /dev/zero or a FIFO is one problem and no servers, never read', () => {
    const { project } = dirs()
    const file = join(project, '.mcp.json')
    symlinkSync('/dev/zero', file)
    expect(readServerFile(file, 'project')).toEqual({
      servers: [],
      problems: [{ source: file, path: '$', message: 'a character device, not a regular file; not read' }],
    })
    rmSync(file)
    execFileSync('mkfifo', [file])
    expect(readServerFile(file, 'project').problems[0]?.message).toBe('a FIFO, not a regular file; not read')
  })
})
