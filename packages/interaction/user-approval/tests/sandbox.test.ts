import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, realpath, symlink, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import { createToolContext, runToolCall, type Tool, type ToolOutput } from '@keel/tools'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CommandLimits,
  osSandboxAvailable,
  sandboxShellTool,
  setSandboxMode,
  userApproval,
} from '../src/index.js'
import { PluginRig } from './rig.js'

let base: string
let ws: string
let home: string
let server: Server
let port: number
const connections: string[] = []

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'keel-approval-sandbox-')))
  ws = join(base, 'ws')
  home = join(base, 'home')
  await mkdir(join(ws, '.git'), { recursive: true })
  await mkdir(join(home, '.ssh'), { recursive: true })
  await mkdir(join(base, 'out'), { recursive: true })
  await writeFile(join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY\n')
  await writeFile(join(base, 'out', 'secret.txt'), 'secret\n')
  await writeFile(join(ws, '.git', 'config'), '[core]\n')
  await symlink('../out', join(ws, 'link-out'))
  server = createServer((socket) => {
    connections.push('connected')
    socket.end('hello from the listener\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

const text = (output: ToolOutput) => output.content.map((b) => (b.type === 'text' ? b.text : '')).join('')

/** Runs one command through the sandboxed bash tool, the approval plugin set up on `session` with mode `mode`. */
async function runIn(
  mode: CommandLimits['mode'],
  command: string,
): Promise<{ output: string; exit: string }> {
  const session = Session.create(`sandbox-${mode}`)
  const rig = await new PluginRig(session, ws).setup(userApproval({ home }), {})
  if (mode !== 'workspace_write') setSandboxMode(session, mode)
  const tool = sandboxShellTool(bashTool()) as Tool<unknown>
  const context = createToolContext({ cwd: ws, session })
  const { output } = await runToolCall(tool, JSON.stringify({ command, timeoutMs: 60_000 }), context)
  await rig.dispose?.()
  const all = text(output)
  return { output: all, exit: /\[exit code (\d+)\]/.exec(all)?.[1] ?? 'none' }
}

const available = await osSandboxAvailable()

it('finds the OS sandbox where CI installs it (bubblewrap, socat, ripgrep)', () => {
  // Skipping the escapes below silently on CI would hide a missing install step.
  if (process.env.CI) expect(available).toBe(true)
  expect(typeof available).toBe('boolean')
})

describe.skipIf(!available)('the OS sandbox around shell commands (bubblewrap)', () => {
  const escapes: Array<[label: string, command: () => string, check: () => Promise<boolean>]> = [
    [
      'write outside the workspace',
      () => `echo pwned > ${base}/out/written.txt`,
      async () => existsSync(join(base, 'out', 'written.txt')),
    ],
    [
      'write through a symlink out of the workspace',
      () => 'echo pwned > link-out/via-link.txt',
      async () => existsSync(join(base, 'out', 'via-link.txt')),
    ],
    [
      'write through /proc/self/root',
      () => `echo pwned > /proc/self/root${base}/out/proc.txt`,
      async () => existsSync(join(base, 'out', 'proc.txt')),
    ],
    [
      'overwrite .git/config',
      () => 'echo "[evil]" > .git/config',
      async () => (await readFile(join(ws, '.git', 'config'), 'utf8')).includes('evil'),
    ],
    [
      'create .keel',
      () => 'mkdir -p .keel && echo x > .keel/settings.json',
      async () => existsSync(join(ws, '.keel', 'settings.json')),
    ],
  ]

  it.each(escapes)(
    'refuses to %s inside, allows it with danger_full_access',
    async (_label, command, happened) => {
      const inside = await runIn('workspace_write', command())
      expect(await happened(), inside.output).toBe(false)
      expect(inside.exit).not.toBe('0')
      const outside = await runIn('danger_full_access', command())
      expect(outside.exit, outside.output).toBe('0')
      expect(await happened()).toBe(true)
    },
  )

  it('cannot read ~/.ssh inside; can with danger_full_access', async () => {
    const inside = await runIn('workspace_write', `cat ${home}/.ssh/id_rsa`)
    expect(inside.output).not.toContain('PRIVATE KEY')
    expect(inside.exit).not.toBe('0')
    const outside = await runIn('danger_full_access', `cat ${home}/.ssh/id_rsa`)
    expect(outside.output).toContain('PRIVATE KEY')
  })

  it('cannot reach a local listener inside; can with danger_full_access', async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`
    const before = connections.length
    const inside = await runIn('workspace_write', probe)
    expect(inside.output).not.toContain('hello from the listener')
    expect(inside.exit).not.toBe('0')
    expect(connections.length).toBe(before)
    const outside = await runIn('danger_full_access', probe)
    expect(outside.output).toContain('hello from the listener')
    expect(connections.length).toBe(before + 1)
  })

  it('writes inside the workspace, reads outside it, and keeps the exit code', async () => {
    const inside = await runIn(
      'workspace_write',
      'echo ok > made.txt && cat made.txt && cat ../out/secret.txt',
    )
    expect(inside.exit).toBe('0')
    expect(inside.output).toContain('ok\nsecret')
    expect(await readFile(join(ws, 'made.txt'), 'utf8')).toBe('ok\n')
    expect((await runIn('workspace_write', 'exit 7')).exit).toBe('7')
  })

  it('read_only: no write anywhere, not even in the workspace', async () => {
    const inside = await runIn('read_only', 'echo x > ro.txt')
    expect(inside.exit).not.toBe('0')
    expect(existsSync(join(ws, 'ro.txt'))).toBe(false)
    expect((await runIn('read_only', 'cat ../out/secret.txt')).output).toContain('secret')
  })
})
