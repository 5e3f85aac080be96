import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { appendSampleTurn } from '@keel/store-testkit'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { tempHome } from './helpers.js'

const home = tempHome()
afterAll(() => rmSync(home, { recursive: true, force: true }))

describe('jsonl truncation (property)', () => {
  it('a file cut at any byte after the header loads as exactly the complete lines before the cut', async () => {
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'cut' })
    for (let i = 0; i < 6; i++) appendSampleTurn(handle.session, `é ${'😀'.repeat(i * 3)} turn ${i}`)
    await handle.close()
    const file = store.fileOf('cut')
    const full = readFileSync(file)
    const headerEnd = full.indexOf(10) + 1
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: headerEnd, max: full.length }), async (cut) => {
        writeFileSync(file, full.subarray(0, cut))
        const inspection = await store.inspect('cut')
        const prefix = full.subarray(headerEnd, cut)
        const completeLines = prefix.filter((b) => b === 10).length
        const tail = prefix.subarray(prefix.lastIndexOf(10) + 1)
        // a tail that is a whole line without its newline is kept; any other tail is dropped
        const wholeLine = cut < full.length && full[cut] === 10 && tail.length > 0
        expect(inspection.events.length).toBe(completeLines + (wholeLine ? 1 : 0))
        const codes = inspection.notices.map((n) => n.code).filter((c) => c !== 'INTERRUPTED_TURN')
        expect(codes).toEqual(
          tail.length === 0 ? [] : wholeLine ? ['MISSING_FINAL_NEWLINE'] : ['TORN_TAIL_DROPPED'],
        )
        expect(JSON.stringify(inspection.events)).toBe(
          JSON.stringify(handle.session.events.slice(0, inspection.events.length)),
        )
      }),
      { numRuns: 300 },
    )
  })
})
