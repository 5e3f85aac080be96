// A session named by the start of its id, as `git` takes an abbreviated hash.
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close()
})

describe('a session id given by its start', { timeout: 120_000 }, () => {
  it('resume, show and verify take a unique start of an id; an ambiguous or too short one is refused', async () => {
    const r = await keelRig([{ text: 'one' }, { text: 'two' }])
    rigs.push(r)
    const flags = ['--base-url', r.server.baseURL, '--cwd', r.cwd]
    const first = await runKeel(['-p', 'hi', '--output', 'json', ...flags], { env: r.env })
    const id = JSON.parse(first.stdout).session_id as string
    const start = id.slice(0, 8)

    const resumed = await runKeel(['resume', start, '-p', 'again', ...flags], { env: r.env })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`resumed session ${id}`)
    expect(resumed.stdout).toContain('two')
    const shown = await runKeel(['sessions', 'show', start], { env: r.env })
    expect(shown.stdout.split('\n')[0]).toBe(`session ${id} — hi`)
    const verified = await runKeel(['sessions', 'verify', start], { env: r.env })
    expect(verified.code, verified.stderr).toBe(0)

    // two sessions whose ids start alike, and a start shorter than four characters
    const store = new JsonlStore({ home: r.home })
    await (await store.create({ id: 'abcd-1' })).close()
    await (await store.create({ id: 'abcd-2' })).close()
    await store.close()
    const ambiguous = await runKeel(['sessions', 'show', 'abcd'], { env: r.env })
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toBe(
      'keel: session id abcd is the start of 2 sessions (abcd-1, abcd-2); type more of it\n',
    )
    const short = await runKeel(['sessions', 'show', id.slice(0, 3)], { env: r.env })
    expect(short.code).toBe(2)
    expect(short.stderr).toContain(`SESSION_NOT_FOUND: session ${id.slice(0, 3)} not found`)
    const none = await runKeel(['resume', 'zzzz-none', '-p', 'x', ...flags], { env: r.env })
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('SESSION_NOT_FOUND: session zzzz-none not found')
    expect(r.server.requests).toHaveLength(2)
  })
})
