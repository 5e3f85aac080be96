import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { globTool, grepTool, readFileTool, writeFileTool } from '@keel/fs'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  decide,
  type PermissionDecision,
  permissionRequest,
  sandboxShellTool,
  userApprovalConfigSchema,
} from '../src/index.js'

let base: string
let ws: string

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'keel-approval-attacks-')))
  ws = join(base, 'ws')
  await mkdir(join(ws, 'src'), { recursive: true })
  await mkdir(join(ws, '.git', 'hooks'), { recursive: true })
  await mkdir(join(ws, 'sub', '.git'), { recursive: true })
  await mkdir(join(base, 'out'), { recursive: true })
  await writeFile(join(ws, 'src', 'a.txt'), 'inside\n')
  await writeFile(join(base, 'out', 'secret.txt'), 'secret\n')
  await symlink('../out', join(ws, 'link-out'))
  await symlink('../out/secret.txt', join(ws, 'file-link'))
  await symlink('../out/new.txt', join(ws, 'dangling'))
  await symlink('/etc', join(ws, 'abs-link'))
  await symlink('link-out', join(ws, 'chain'))
  await symlink('..', join(ws, 'up'))
  await symlink('loop2', join(ws, 'loop1'))
  await symlink('loop1', join(ws, 'loop2'))
  await symlink('src', join(ws, 'inner-link'))
  await symlink('src/a.txt', join(ws, 'inner-file-link'))
  await symlink(ws, join(base, 'ws-link'))
  await mkdir(join(ws, 'docs', 'sub'), { recursive: true })
  await symlink('docs/sub', join(ws, 'link-docs'))
})

const read = readFileTool() as Tool<unknown>
const write = writeFileTool() as Tool<unknown>
const bash = sandboxShellTool(bashTool()) as Tool<unknown>

async function judge(
  tool: Tool<unknown>,
  input: unknown,
  cwd = ws,
  approvalPolicy = 'on_request',
): Promise<PermissionDecision> {
  const config = userApprovalConfigSchema.parse({ approvalPolicy })
  const facts = tool.facts?.(input, cwd) ?? {}
  const request = await permissionRequest({ tool, input, facts }, cwd, Session.create('attack'), config, {
    roots: [ws],
    protectedPaths: [],
    osSandbox: true,
  })
  return decide(request)
}

function outcome(d: PermissionDecision): string {
  return d.type === 'deny' ? d.errorCode : d.type
}

type Case = [label: string, tool: 'read' | 'write' | 'bash', arg: () => string, expected: string]

const tools = { read, write, bash }
const input = (tool: 'read' | 'write' | 'bash', arg: string) =>
  tool === 'read'
    ? { path: arg }
    : tool === 'write'
      ? { path: arg, content: 'x' }
      : { command: 'ls', cwd: arg }

/**
 * Denied in workspace_write; each has an allowed twin below. A read outside (`read`, a shell
 * `cwd`) is not a limit but a question: under on_request it is asked about, naming where it
 * really leads; under never it is refused with the code listed here.
 */
const attacks: Case[] = [
  ['traversal read', 'read', () => '../out/secret.txt', 'OUTSIDE_WORKSPACE'],
  ['traversal write', 'write', () => '../out/x', 'OUTSIDE_WORKSPACE'],
  ['absolute read', 'read', () => '/etc/passwd', 'OUTSIDE_WORKSPACE'],
  ['absolute write', 'write', () => '/tmp/keel-approval-x', 'OUTSIDE_WORKSPACE'],
  ['traversal through a subdirectory', 'read', () => 'src/../../out/secret.txt', 'OUTSIDE_WORKSPACE'],
  ['dot segments', 'read', () => './src/./.././../out/secret.txt', 'OUTSIDE_WORKSPACE'],
  ['double slashes', 'read', () => '//etc//passwd', 'OUTSIDE_WORKSPACE'],
  ['absolute with ..', 'read', () => `${ws}/../out/secret.txt`, 'OUTSIDE_WORKSPACE'],
  ['through a symlinked directory (read)', 'read', () => 'link-out/secret.txt', 'OUTSIDE_WORKSPACE'],
  ['through a symlinked directory (write)', 'write', () => 'link-out/new.txt', 'OUTSIDE_WORKSPACE'],
  ['symlink to a file outside (read)', 'read', () => 'file-link', 'OUTSIDE_WORKSPACE'],
  ['symlink to a file outside (write)', 'write', () => 'file-link', 'OUTSIDE_WORKSPACE'],
  ['dangling symlink pointing out (write)', 'write', () => 'dangling', 'OUTSIDE_WORKSPACE'],
  ['absolute symlink', 'read', () => 'abs-link/passwd', 'OUTSIDE_WORKSPACE'],
  ['symlink to a symlink', 'read', () => 'chain/secret.txt', 'OUTSIDE_WORKSPACE'],
  ['symlink to the parent', 'write', () => 'up/out/x', 'OUTSIDE_WORKSPACE'],
  ['/proc/self/root', 'read', () => '/proc/self/root/etc/passwd', 'OUTSIDE_WORKSPACE'],
  ['/proc/self/cwd escape', 'read', () => '/proc/self/cwd/../../../../etc/passwd', 'OUTSIDE_WORKSPACE'],
  ['case trick on the root name', 'read', () => `${base}/WS/src/a.txt`, 'OUTSIDE_WORKSPACE'],
  ['sibling with the root as prefix', 'write', () => `${ws}-evil/x`, 'OUTSIDE_WORKSPACE'],
  ['protected .git', 'write', () => '.git/config', 'PROTECTED_PATH'],
  ['protected .git hooks', 'write', () => '.git/hooks/pre-commit', 'PROTECTED_PATH'],
  ['protected .git itself', 'write', () => '.git', 'PROTECTED_PATH'],
  ['case trick .GIT', 'write', () => '.GIT/config', 'PROTECTED_PATH'],
  ['trailing dot .git.', 'write', () => '.git./config', 'PROTECTED_PATH'],
  ['protected .keel', 'write', () => '.keel/settings.json', 'PROTECTED_PATH'],
  ['case trick .Keel', 'write', () => '.Keel/settings.json', 'PROTECTED_PATH'],
  ['nested repository .git', 'write', () => 'sub/.git/HEAD', 'PROTECTED_PATH'],
  ['protected through an absolute path', 'write', () => `${ws}/src/../.git/config`, 'PROTECTED_PATH'],
  ['NUL byte', 'read', () => 'src/a.txt\0../../etc/passwd', 'INVALID_PATH'],
  ['NUL byte (write)', 'write', () => 'src/\0x', 'INVALID_PATH'],
  ['very long path', 'read', () => 'a/'.repeat(2100), 'PATH_UNRESOLVABLE'],
  ['over-long name', 'write', () => `src/${'x'.repeat(300)}`, 'PATH_UNRESOLVABLE'],
  ['symlink loop', 'read', () => 'loop1/x', 'PATH_UNRESOLVABLE'],
  ['shell cwd outside', 'bash', () => '..', 'OUTSIDE_WORKSPACE'],
  ['shell cwd through a symlink', 'bash', () => 'link-out', 'OUTSIDE_WORKSPACE'],
  ['shell cwd /proc/self/root', 'bash', () => '/proc/self/root/tmp', 'OUTSIDE_WORKSPACE'],
]

/** The allowed twins: the same shapes, staying inside. */
const twins: Case[] = [
  ['plain read', 'read', () => 'src/a.txt', 'allow'],
  ['plain write', 'write', () => 'src/new.txt', 'allow'],
  ['absolute inside', 'read', () => `${ws}/src/a.txt`, 'allow'],
  ['traversal that comes back', 'read', () => 'src/../src/a.txt', 'allow'],
  ['dot segments staying inside', 'write', () => './src/./../src/b.txt', 'allow'],
  ['double slashes inside', 'read', () => `/${ws}//src//a.txt`, 'allow'],
  ['symlinked directory inside', 'write', () => 'inner-link/c.txt', 'allow'],
  ['symlinked file inside', 'read', () => 'inner-file-link', 'allow'],
  ['symlink to the parent and back', 'read', () => 'up/ws/src/a.txt', 'allow'],
  ['/proc/self/root into the workspace', 'read', () => `/proc/self/root${ws}/src/a.txt`, 'allow'],
  ['workspace reached through a symlink', 'read', () => `${base}/ws-link/src/a.txt`, 'allow'],
  ['.github is not .git', 'write', () => '.github/workflows/ci.yml', 'allow'],
  ['.gitignore is not .git', 'write', () => '.gitignore', 'allow'],
  ['.keelrc is not .keel', 'write', () => '.keelrc', 'allow'],
  ['reading .git is fine', 'read', () => '.git/config', 'allow'],
  ['deep path', 'write', () => `${'d/'.repeat(100)}f.txt`, 'allow'],
  ['long name', 'write', () => `src/${'x'.repeat(255)}`, 'allow'],
  ['shell cwd inside', 'bash', () => 'src', 'allow'],
  ['shell cwd through an inside symlink', 'bash', () => 'inner-link', 'allow'],
]

describe('attack corpus in workspace_write (real files, real symlinks)', () => {
  it('has at least 30 attacks', () => {
    expect(attacks.length).toBeGreaterThanOrEqual(30)
  })
  it.each(attacks)('denies %s', async (_label, tool, arg, expected) => {
    const asked = expected === 'OUTSIDE_WORKSPACE' && tool !== 'write'
    const first = await judge(tools[tool], input(tool, arg()))
    expect(outcome(first)).toBe(asked ? 'ask' : expected)
    if (asked) {
      expect(first.reason).toContain('outside the workspace')
      expect(outcome(await judge(tools[tool], input(tool, arg()), ws, 'never'))).toBe(expected)
    }
  })
  it.each(twins)('allows the twin: %s', async (_label, tool, arg, expected) => {
    expect(outcome(await judge(tools[tool], input(tool, arg())))).toBe(expected)
  })
  it('judges relative paths from a working directory reached through a symlink', async () => {
    const viaLink = join(base, 'ws-link')
    expect(outcome(await judge(read, { path: 'src/a.txt' }, viaLink))).toBe('allow')
    expect(outcome(await judge(read, { path: '../out/secret.txt' }, viaLink, 'never'))).toBe(
      'OUTSIDE_WORKSPACE',
    )
  })
})

describe('search tools whose pattern climbs out (glob, grep), judged on every root they search', () => {
  const glob = globTool() as Tool<unknown>
  const grep = grepTool() as Tool<unknown>
  const cases: Array<[label: string, tool: Tool<unknown>, input: () => unknown, cwd: () => string]> = [
    [
      'glob from a symlinked directory',
      glob,
      () => ({ path: 'link-docs', pattern: '../../out/*' }),
      () => ws,
    ],
    [
      'grep glob from a symlinked directory',
      grep,
      () => ({ pattern: 'secret', path: 'link-docs', glob: '../../out/*' }),
      () => ws,
    ],
    [
      'glob from a workspace reached through an alias',
      glob,
      () => ({ pattern: '../out/*' }),
      () => join(base, 'ws-link'),
    ],
    [
      'grep glob from a workspace reached through an alias',
      grep,
      () => ({ pattern: 'secret', glob: '../out/**' }),
      () => join(base, 'ws-link'),
    ],
  ]
  it.each(cases)(
    '%s: a read outside, asked about (refused under never), in read_only and workspace_write',
    async (_label, tool, input, cwd) => {
      for (const sandboxMode of ['read_only', 'workspace_write'] as const) {
        const config = userApprovalConfigSchema.parse({ sandboxMode })
        for (const approvalPolicy of ['on_request', 'never'] as const) {
          const facts = tool.facts?.(input(), cwd()) ?? {}
          const request = await permissionRequest(
            { tool, input: input(), facts },
            cwd(),
            Session.create('search'),
            { ...config, approvalPolicy },
            { roots: [ws], protectedPaths: [], osSandbox: true },
          )
          const d = decide(request)
          expect(outcome(d), `${sandboxMode} ${approvalPolicy}`).toBe(
            approvalPolicy === 'never' ? 'OUTSIDE_WORKSPACE' : 'ask',
          )
        }
      }
    },
  )
})
