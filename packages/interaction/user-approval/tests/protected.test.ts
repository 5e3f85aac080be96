import { mkdir, mkdtemp, realpath, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { findProtectedPaths } from '../src/index.js'

let ws: string
let outside: string
beforeAll(async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-protected-')))
  ws = join(base, 'ws')
  outside = join(base, 'outside')
  await mkdir(join(ws, '.git', 'hooks'), { recursive: true })
  await mkdir(join(ws, 'vendor', 'lib', '.git'), { recursive: true })
  await mkdir(join(ws, 'a', 'b', 'c', 'd', 'e', 'f', '.GIT'), { recursive: true })
  await mkdir(join(ws, 'tools', '.keel'), { recursive: true })
  await mkdir(join(outside, 'repo', '.git'), { recursive: true })
  await symlink(outside, join(ws, 'link-out'))
})

describe('findProtectedPaths', () => {
  it('finds every .git and .keel at any depth (case-folded), without following symlinks or walking into them', async () => {
    const found = await findProtectedPaths([ws], ['.git', '.keel'])
    expect(found.sort()).toEqual(
      [
        join(ws, '.git'),
        join(ws, 'a', 'b', 'c', 'd', 'e', 'f', '.GIT'),
        join(ws, 'tools', '.keel'),
        join(ws, 'vendor', 'lib', '.git'),
      ].sort(),
    )
  })

  it('refuses past its bound instead of returning a guard that may be incomplete', async () => {
    await expect(findProtectedPaths([ws], ['.git'], 3)).rejects.toMatchObject({
      code: 'SANDBOX_SCAN_LIMIT',
      details: { limit: 3 },
    })
    expect((await findProtectedPaths([ws], ['.git'], 100)).length).toBe(3)
  })

  it('skips a root that does not exist', async () => {
    expect(await findProtectedPaths([join(ws, 'missing')], ['.git'])).toEqual([])
  })
})
