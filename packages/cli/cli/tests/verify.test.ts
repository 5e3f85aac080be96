import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeCheckpoint, encodeCheckpoint } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../src/index.js'

const homes: string[] = []
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true })
})

async function run(home: string, ...argv: string[]) {
  let out = ''
  let err = ''
  const code = await runCli(argv, {
    env: { KEEL_HOME: home },
    out: (t) => {
      out += t
    },
    err: (t) => {
      err += t
    },
  })
  return { code, out, err }
}

describe('keel sessions verify', () => {
  it('replays the log and compares it with the checkpoint: exit 0 when they agree, 1 naming what differs', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-verify-'))
    homes.push(home)
    const store = new JsonlStore({ home, checkpoints: { every: 1, minEvents: 0 } })
    const handle = await store.create({ id: 'v' })
    for (let turn = 1; turn <= 2; turn++) {
      handle.session.append('turn/start', { turn })
      handle.session.append('user/message', {
        message: { role: 'user', content: [{ type: 'text', text: `q${turn}` }] },
      })
      handle.session.append('turn/end', { turn, reason: 'completed' })
      await handle.flush()
    }
    await handle.close()
    const ok = await run(home, 'sessions', 'verify', 'v')
    expect(ok.code).toBe(0)
    expect(ok.out).toContain('6 events replayed')
    expect(ok.out).toContain('seqs 0..5 covered, every CRC held')
    expect(ok.out).toContain('checkpoint at seq 6: resuming from it gives exactly the replayed state')
    const json = await run(home, 'sessions', 'verify', 'v', '--json')
    expect(JSON.parse(json.out)).toMatchObject({
      id: 'v',
      events: 6,
      differences: [],
      checkpoint: { usable: true },
    })
    // a checkpoint that passes every quick check but was folded wrong: only the replay can tell
    const file = join(store.sessionsDir, 'v', 'session.checkpoint')
    const decoded = decodeCheckpoint(readFileSync(file), 'v')
    if (!decoded.ok) throw new Error(decoded.reason)
    const { doc } = decoded
    writeFileSync(
      file,
      encodeCheckpoint({
        ...doc,
        state: { ...doc.state, lifecycle: { ...doc.state.lifecycle, lastTurn: 9 } },
      }),
    )
    const forged = await run(home, 'sessions', 'verify', 'v')
    expect(forged.code).toBe(1)
    expect(forged.out).toContain('DIFFERS: lifecycle')
    expect((await run(home, 'sessions', 'verify')).code).toBe(2)
    const missing = await run(home, 'sessions', 'verify', 'nobody')
    expect(missing.err).toContain('SESSION_NOT_FOUND')
  })
})
