// `keel --model` with the coding preset's model-selection plugin: a logged switch that resume keeps.
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'
import { ptyTests } from './pty.js'

const t = ptyTests()
const rigs: KeelRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close()
})

describe('keel --model', () => {
  it('records model/selection (source cli); a later resume without --model keeps the model; a refused switch is exit 2', async () => {
    const r = await keelRig([{ text: 'one' }, { text: 'two' }])
    rigs.push(r)
    const flags = ['--base-url', r.server.baseURL, '--cwd', r.cwd]
    const first = await runKeel(['-p', 'hi', '--output', 'json', '--model', 'deepseek-v4-pro', ...flags], {
      env: r.env,
    })
    expect(first.code).toBe(0)
    // the switch is said once, on stderr with the composition
    expect(first.stderr.match(/Model: deepseek-v4-pro/gu)).toHaveLength(1)
    const id = JSON.parse(first.stdout).session_id as string
    const resumed = await runKeel(['resume', id, '-p', 'again', ...flags], { env: r.env })
    expect(resumed.code).toBe(0)
    expect(r.server.requests.map((q) => q.body?.model)).toEqual(['deepseek-v4-pro', 'deepseek-v4-pro'])
    const store = new JsonlStore({ home: r.home })
    const session = await store.load(id)
    const selections = session.events.filter((e) => e.type === 'model/selection').map((e) => e.data)
    expect(selections).toEqual([
      expect.objectContaining({ model: 'deepseek-v4-pro', source: 'cli', contextWindow: 1_048_576 }),
    ])
    await store.close()

    const bad = await runKeel(['-p', 'hi', '--model', 'deepseek-v4-pro medium', ...flags], { env: r.env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(
      "MODEL_EFFORT_INVALID: deepseek-v4-pro takes reasoning effort low, high, max; not 'medium'",
    )
  })

  it('names the model of the next request: a resumed selection in the header, the footer and stream-json init; /model moves the footer', async () => {
    const r = await t.rig({ text: 'one' }, { text: 'two' })
    const flags = ['--base-url', r.server.baseURL, '--cwd', r.cwd]
    const first = await runKeel(['-p', 'hi', '--output', 'json', '--model', 'deepseek-v4-pro', ...flags], {
      env: r.env,
    })
    const id = JSON.parse(first.stdout).session_id as string
    const streamed = await runKeel(['resume', id, '-p', 'again', '--output', 'stream-json', ...flags], {
      env: r.env,
    })
    expect(JSON.parse(streamed.stdout.split('\n')[0]!)).toMatchObject({
      type: 'init',
      model: 'deepseek-v4-pro',
    })
    const pty = t.open(r, ['resume', id])
    await pty.ready('› ')
    const footer = async () => (await pty.rows()).filter((row) => row.includes(' · context ')).at(-1)
    expect((await pty.rows()).some((row) => row.startsWith(`session ${id} · deepseek-v4-pro`))).toBe(true)
    expect(await footer()).toMatch(/^deepseek-v4-pro · /u)
    pty.write('/model deepseek-v4-flash\r')
    await pty.waitFor('Model: deepseek-v4-flash')
    await pty.waitForScreen('the footer to follow', (rows) =>
      rows.some((row) => row.startsWith('deepseek-v4-flash · context ')),
    )
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })
})
