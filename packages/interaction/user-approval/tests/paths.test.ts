import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { isWithin, realLocation } from '../src/index.js'

let base: string
let ws: string

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'keel-approval-paths-')))
  ws = join(base, 'ws')
  await mkdir(join(ws, 'a', 'b'), { recursive: true })
  await mkdir(join(base, 'out', 'deep'), { recursive: true })
  await writeFile(join(ws, 'a', 'f.txt'), 'x')
  await writeFile(join(base, 'out', 'deep', 'g.txt'), 'x')
  await symlink('../out', join(ws, 'out-link'))
  await symlink('a/b', join(ws, 'b-link'))
  await symlink('..', join(ws, 'a', 'up'))
  await symlink(join(base, 'out', 'deep'), join(ws, 'a', 'abs-deep'))
  await symlink('../../out/deep/g.txt', join(ws, 'a', 'g-link'))
})

const segments = [
  'a',
  'b',
  'f.txt',
  'out',
  'deep',
  'g.txt',
  'out-link',
  'b-link',
  'up',
  'abs-deep',
  'g-link',
  '..',
  '.',
  'ws',
]

describe('realLocation', () => {
  it('agrees with the kernel (fs.realpath) on every path that exists, and stays lexical below what does not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...segments), { maxLength: 8 }), async (parts) => {
        // Not normalized: `..` after a symlink must go up from where the link leads, as the kernel does.
        const path = [ws, ...parts].join('/')
        const ours = await realLocation(path)
        expect(typeof ours).toBe('string')
        let kernel: string | undefined
        try {
          kernel = await realpath(path)
        } catch {
          kernel = undefined
        }
        if (kernel !== undefined) expect(ours).toBe(kernel)
        // whatever exists or not, the verdict "inside the workspace" never contradicts the kernel's
        if (kernel !== undefined) expect(isWithin(ours as string, ws)).toBe(isWithin(kernel, ws))
      }),
      { seed: 20261130, numRuns: 400 },
    )
  })

  it('follows a dangling final symlink to where a write would land', async () => {
    await symlink('../out/new-file', join(ws, 'dangling'))
    expect(await realLocation(join(ws, 'dangling'))).toBe(join(base, 'out', 'new-file'))
  })
})
