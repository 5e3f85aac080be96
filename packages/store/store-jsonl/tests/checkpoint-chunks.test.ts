import { readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { tempHome } from './helpers.js'

describe('jsonl: a checkpoint larger than one read', () => {
  it('is read in chunks, multi-byte text across their edges intact, and resumes as the replay does', async () => {
    const home = tempHome()
    try {
      const store = new JsonlStore({ home, checkpoints: { every: 1, minEvents: 0 } })
      const handle = await store.create({ id: 'wide' })
      for (let turn = 1; turn <= 60; turn++) {
        // 3-byte and 4-byte characters at every offset: some straddle a 64 KiB chunk edge
        const text = `${'é✓'.repeat(turn)}${'𝄞 déjà vu — '.repeat(400)}${turn}`
        handle.session.append('turn/start', { turn })
        handle.session.append('user/message', {
          message: { role: 'user', content: [{ type: 'text', text }] },
        })
        handle.session.append('turn/end', { turn, reason: 'completed' })
      }
      await handle.close()
      const checkpoint = join(store.sessionsDir, 'wide', 'session.checkpoint')
      expect(statSync(checkpoint).size).toBeGreaterThan(4 * 64 * 1024)
      expect(readFileSync(checkpoint, 'utf8').split('\n').length).toBeGreaterThan(60)
      const resumed = await store.load('wide')
      const replayed = await new JsonlStore({ home, checkpoints: false }).load('wide')
      expect(resumed.residentFrom).toBe(resumed.nextSeq)
      expect(replayed.residentFrom).toBe(0)
      expect(resumed.deriveMessages()).toEqual(replayed.deriveMessages())
      expect(Object.isFrozen(resumed.deriveMessages()[5]!.content)).toBe(true)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})
