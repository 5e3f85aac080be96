import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../src/commands.js'
import { runKeel } from './keel-process.js'

// The real MCP server the @keel/mcp tests run (built with the same SDK).
const FIXTURE = fileURLToPath(new URL('../../../mcp/mcp/tests/fixtures/server.mjs', import.meta.url))

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

async function keel(argv: string[], env: Record<string, string>, cwd: string) {
  let out = ''
  let err = ''
  const code = await runCli(argv, { env, cwd, out: (t) => (out += t), err: (t) => (err += t) })
  return { code, out, err }
}

describe('keel mcp list', () => {
  it('starts each server once and shows its state; project servers only with --project', async () => {
    const root = mkdtempSync(join(tmpdir(), 'keel-mcp-cli-'))
    roots.push(root)
    const home = join(root, 'home')
    const project = join(root, 'project')
    mkdirSync(home)
    mkdirSync(project)
    writeFileSync(
      join(home, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          mine: { command: process.execPath, args: [FIXTURE] },
          gone: { command: join(root, 'no-such-server') },
        },
      }),
    )
    writeFileSync(
      join(project, '.mcp.json'),
      JSON.stringify({
        mcpServers: { repo: { command: process.execPath, args: [FIXTURE] }, bad: { url: 'x' } },
      }),
    )
    const env = { KEEL_HOME: home, PATH: process.env.PATH ?? '' }
    const listed = await keel(['mcp', 'list'], env, project)
    expect(listed.err).toBe('')
    expect(listed.code).toBe(0)
    expect(listed.out).toMatch(/^mine\s+user\s+stdio\s+connected\s+9 tools \(keel-fixture 1\.1\.0\)$/mu)
    expect(listed.out).toMatch(/^gone\s+user\s+stdio\s+failed$/mu)
    expect(listed.out).toContain('MCP_CONNECT_FAILED: cannot connect to')
    expect(listed.out).toMatch(/^repo\s+project\s+stdio\s+needs approval$/mu)
    expect(listed.out).toContain('keel mcp list --project starts them')
    expect(listed.out).toContain('$.mcpServers.bad.type: an entry with "url" needs "type"')
    const all = await keel(['mcp', 'list', '--project', '--tools'], env, project)
    expect(all.out).toMatch(/^repo\s+project\s+stdio\s+connected\s+9 tools/mu)
    expect(all.out).toContain('- mcp__repo__echo')
    const wrong = await keel(['mcp', 'frob'], env, project)
    expect(wrong.code).toBe(2)
    expect(wrong.err).toContain('usage: keel mcp list')
  })
  // The shipped command runs the bundle (dist/cli.js), where a lazily imported CommonJS
  // module (Ajv) has only a default export: every tool's schema must still compile there.
  it('the installed keel (its bundle) offers the server’s tools', async () => {
    const root = mkdtempSync(join(tmpdir(), 'keel-mcp-bundle-'))
    roots.push(root)
    const home = join(root, 'home')
    mkdirSync(home)
    writeFileSync(
      join(home, 'mcp.json'),
      JSON.stringify({ mcpServers: { mine: { command: process.execPath, args: [FIXTURE] } } }),
    )
    const env = { KEEL_HOME: home, PATH: process.env.PATH ?? '', KEEL_TRACE_START: '1' }
    const run = await runKeel(['mcp', 'list', '--tools'], { env, cwd: root })
    expect(run.stderr).toContain('keel: start: dist/cli.js (the bundle is current)')
    expect(run.code).toBe(0)
    expect(run.stdout).not.toContain('not offered')
    expect(run.stdout).toMatch(/^mine\s+user\s+stdio\s+connected\s+9 tools/mu)
    expect(run.stdout).toContain('- mcp__mine__echo')
  })
})
