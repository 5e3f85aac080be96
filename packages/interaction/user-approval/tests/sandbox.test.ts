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
  osSandboxStatus,
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
  // nested repositories: one where the runtime's own scan reaches, one deeper than it looks
  await mkdir(join(ws, 'vendor', 'lib', '.git', 'hooks'), { recursive: true })
  await writeFile(join(ws, 'vendor', 'lib', '.git', 'config'), '[core]\n')
  await mkdir(join(ws, 'a', 'b', 'c', 'd', 'e', '.git', 'hooks'), { recursive: true })
  await mkdir(join(ws, 'tools', '.keel'), { recursive: true })
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
  config: Record<string, unknown> = {},
): Promise<{ output: string; exit: string }> {
  const session = Session.create(`sandbox-${mode}`)
  const rig = await new PluginRig(session, ws).setup(userApproval({ home }), config)
  if (mode !== 'workspace_write') setSandboxMode(session, mode)
  const tool = sandboxShellTool(bashTool()) as Tool<unknown>
  const context = createToolContext({ cwd: ws, session, services: rig.host!.services })
  const { output } = await runToolCall(tool, JSON.stringify({ command, timeoutMs: 60_000 }), context)
  await rig.dispose?.()
  const all = text(output)
  return { output: all, exit: /\[exit code (\d+)\]/.exec(all)?.[1] ?? 'none' }
}

const status = await osSandboxStatus()
const available = await osSandboxAvailable()

it('finds the OS sandbox where CI installs it (bubblewrap, socat, ripgrep)', () => {
  // Skipping the escapes below silently on CI would hide a missing install step.
  if (process.env.CI) expect(available, JSON.stringify(status)).toBe(true)
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
      "write a nested repository's .git/hooks/pre-commit",
      () => 'printf "#!/bin/sh\\necho owned\\n" > vendor/lib/.git/hooks/pre-commit',
      async () => existsSync(join(ws, 'vendor', 'lib', '.git', 'hooks', 'pre-commit')),
    ],
    [
      "append to a nested repository's .git/config",
      () => 'printf "[alias]\\n  st = !sh evil.sh\\n" >> vendor/lib/.git/config',
      async () => (await readFile(join(ws, 'vendor', 'lib', '.git', 'config'), 'utf8')).includes('alias'),
    ],
    [
      "write a deeply nested repository's .git/hooks",
      () => 'echo x > a/b/c/d/e/.git/hooks/post-checkout',
      async () => existsSync(join(ws, 'a', 'b', 'c', 'd', 'e', '.git', 'hooks', 'post-checkout')),
    ],
    [
      'write a nested .keel',
      () => 'echo x > tools/.keel/settings.json',
      async () => existsSync(join(ws, 'tools', '.keel', 'settings.json')),
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

describe.skipIf(!available)('the shared sandbox runtime', () => {
  it('lets the process exit once the agent is done with it (no proxy left listening)', async () => {
    const { execFile } = await import('node:child_process')
    const script = join(base, 'exit-check.mts')
    const src = new URL('../src/index.ts', import.meta.url).pathname
    await writeFile(
      script,
      [
        `import { wrapCommand } from ${JSON.stringify(src)}`,
        `const limits = { mode: 'workspace_write' as const, writableRoots: [${JSON.stringify(ws)}], denyWrite: [], denyRead: [], allowedDomains: ['example.com'] }`,
        `const w = await wrapCommand('echo inside', limits)`,
        `const { execSync } = await import('node:child_process')`,
        'process.stdout.write(execSync(w.command, { shell: "/bin/bash" }).toString())',
        'await w.release()',
      ].join('\n'),
    )
    const tsx = new URL('../../../../node_modules/.bin/tsx', import.meta.url).pathname
    const result = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(tsx, [script], { timeout: 60_000 }, (error, stdout) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out: stdout })
      })
      child.stdin?.end()
    })
    expect(result.out).toContain('inside')
    expect(result.code).toBe(0)
  }, 90_000)
})

describe.skipIf(!available)('timeouts inside the OS sandbox', () => {
  it('a command past its timeout is killed with everything it started inside the sandbox', async () => {
    const { execFileSync } = await import('node:child_process')
    const marker = `keel-sandbox-sleeper-${process.pid}`
    const session = Session.create('sandbox-timeout')
    const rig = await new PluginRig(session, ws).setup(userApproval({ home }), {})
    const tool = sandboxShellTool(bashTool({ killGraceMs: 500 })) as Tool<unknown>
    const context = createToolContext({ cwd: ws, session, services: rig.host!.services })
    const command = `(exec -a ${marker} sleep 60) & (exec -a ${marker} sleep 60)`
    const { output } = await runToolCall(tool, JSON.stringify({ command, timeoutMs: 1500 }), context)
    await rig.dispose()
    expect(output.errorCode).toBe('TIMEOUT')
    // nothing named after the marker survives (pgrep exits 1 when nothing matches)
    let left = ''
    for (let i = 0; i < 50; i++) {
      try {
        left = execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' })
      } catch {
        left = ''
        break
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(left).toBe('')
  }, 60_000)
})

describe('where no OS sandbox can run', () => {
  it('says why, and the plugin then asks before every shell command', async () => {
    const { execFile } = await import('node:child_process')
    const { mkdtemp: mkd } = await import('node:fs/promises')
    // a PATH with bash and node but without bubblewrap, socat or ripgrep
    const bin = await mkd(join(tmpdir(), 'keel-approval-nobwrap-'))
    for (const tool of ['bash', 'sh', 'env', 'true']) {
      await symlink(`/usr/bin/${tool}`, join(bin, tool)).catch(() => symlink(`/bin/${tool}`, join(bin, tool)))
    }
    await symlink(process.execPath, join(bin, 'node'))
    const script = join(bin, 'probe.mts')
    const src = new URL('../src/index.ts', import.meta.url).pathname
    const shell = new URL('../node_modules/@keel/shell/src/index.ts', import.meta.url).pathname
    const session = new URL('../node_modules/@keel/session/src/index.ts', import.meta.url).pathname
    await writeFile(
      script,
      [
        `import { osSandboxStatus, permissionRequest, decide, sandboxShellTool, userApprovalConfigSchema } from ${JSON.stringify(src)}`,
        `import { bashTool } from ${JSON.stringify(shell)}`,
        `import { Session } from ${JSON.stringify(session)}`,
        'const status = await osSandboxStatus()',
        'const tool = sandboxShellTool(bashTool())',
        `const input = { command: 'make test' }`,
        `const request = await permissionRequest({ tool, input, facts: tool.facts(input, '/tmp') }, '/tmp', Session.create('p'), userApprovalConfigSchema.parse({}), { roots: ['/tmp'], protectedPaths: [], osSandbox: true })`,
        'console.log(JSON.stringify({ status, decision: decide(request) }))',
      ].join('\n'),
    )
    const tsx = new URL('../../../../node_modules/tsx/dist/cli.mjs', import.meta.url).pathname
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [tsx, script],
        { env: { PATH: bin, HOME: home }, timeout: 60_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      )
    })
    const { status: probed, decision } = JSON.parse(out.trim().split('\n').at(-1)!)
    expect(probed.available).toBe(false)
    expect(probed.reason).toMatch(/bubblewrap|bwrap|socat|ripgrep|rg/i)
    expect(decision).toMatchObject({ type: 'ask', source: 'policy' })
  }, 90_000)
})

describe.skipIf(!available)('the network allow list', () => {
  it('reaches only the domains the config allows, through the sandbox proxy', async () => {
    const { createServer: createHttpServer } = await import('node:http')
    const http = createHttpServer((_req, res) => res.end('hello over http\n'))
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const httpPort = (http.address() as { port: number }).port
    try {
      // Inside, the only way out is the proxy named in HTTP_PROXY (with its credentials).
      const viaProxy = [
        'node -e "',
        "const u = new URL(process.env.HTTP_PROXY); const http = require('http');",
        "const auth = 'Basic ' + Buffer.from(decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password)).toString('base64');",
        `http.get({ host: u.hostname, port: u.port, path: 'http://127.0.0.1:${httpPort}/', headers: { 'Proxy-Authorization': auth } },`,
        "r => { process.stdout.write('status ' + r.statusCode + ' '); r.pipe(process.stdout) }).on('error', e => { console.log('error ' + e.message); process.exitCode = 1 })",
        '"',
      ].join(' ')
      const closed = await runIn('workspace_write', viaProxy)
      expect(closed.output).not.toContain('hello over http')
      expect(closed.output).toContain('status 403')
      const open = await runIn('workspace_write', viaProxy, { allowedDomains: [`127.0.0.1:${httpPort}`] })
      expect(open.output).toContain('status 200 hello over http')
    } finally {
      await new Promise((resolve) => http.close(resolve))
    }
  }, 60_000)
})

describe.skipIf(!available)(
  'command corpus in workspace_write: escapes fail, their twins inside succeed',
  () => {
    const outside = () => join(base, 'out')
    const corpus: Array<[label: string, attack: () => string, twin: () => string]> = [
      ['redirect', () => `echo x > ${outside()}/c1`, () => 'echo x > c1'],
      ['relative redirect', () => 'echo x > ../out/c2', () => 'echo x > ./c2'],
      ['tee', () => 'echo x | tee ../out/c3', () => 'echo x | tee c3'],
      ['dd', () => 'echo x | dd of=../out/c4 status=none', () => 'echo x | dd of=c4 status=none'],
      ['cp', () => 'cp /etc/hostname ../out/c5', () => 'cp /etc/hostname c5'],
      ['mv out of the workspace', () => 'echo x > m6 && mv m6 ../out/c6', () => 'echo x > m6 && mv m6 c6'],
      ['mkdir', () => 'mkdir ../out/c7', () => 'mkdir c7'],
      ['rm outside', () => 'rm ../out/secret.txt', () => 'echo x > r8 && rm r8'],
      ['chmod outside', () => 'chmod 000 ../out/secret.txt', () => 'echo x > p9 && chmod 600 p9'],
      ['touch in home', () => `touch ${home}/c10`, () => 'touch c10'],
      ['touch in /tmp', () => `touch ${tmpdir()}/keel-approval-c11-${process.pid}`, () => 'touch c11'],
      [
        'new symlink out, written through',
        () => 'ln -s ../out l12 && echo x > l12/c12',
        () => 'mkdir -p d12 && ln -s d12 k12 && echo x > k12/c12',
      ],
      ['hard link to a file outside', () => 'ln ../out/secret.txt h13', () => 'echo x > f13 && ln f13 h13'],
      [
        '/proc/self/root',
        () => `echo x > /proc/self/root${base}/out/c14`,
        () => `echo x > /proc/self/root${ws}/c14`,
      ],
      ['/proc/self/cwd', () => 'echo x > /proc/self/cwd/../out/c15', () => 'echo x > /proc/self/cwd/c15'],
      ['append to .git/config', () => 'echo "[x]" >> .git/config', () => 'echo "[x]" >> gitconfig-copy'],
      [
        'git hook',
        () => 'mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit',
        () => 'mkdir -p hooks && echo ok > hooks/pre-commit',
      ],
      ['read ~/.ssh', () => `cat ${home}/.ssh/id_rsa`, () => 'echo notes > n18 && cat n18'],
      ['list ~/.ssh', () => `ls ${home}/.ssh | grep id_rsa`, () => 'ls . | grep -q . && echo listed'],
      ['subshell escape', () => 'bash -c "echo x > ../out/c20"', () => 'bash -c "echo x > c20"'],
      ['cd then write', () => 'cd .. && echo x > out/c21', () => 'cd . && echo x > c21'],
    ]
    it.each(corpus)('%s', async (_label, attack, twin) => {
      const before = await readFile(join(base, 'out', 'secret.txt'), 'utf8').catch(() => 'gone')
      const denied = await runIn('workspace_write', attack())
      expect(denied.exit, denied.output).not.toBe('0')
      expect(await readFile(join(base, 'out', 'secret.txt'), 'utf8').catch(() => 'gone')).toBe(before)
      const allowed = await runIn('workspace_write', twin())
      expect(allowed.exit, allowed.output).toBe('0')
    })
  },
)
