// Files where the store expects folders, and folders where it expects files: the store's
// own `sessions` folder, a session's folder, its `blobs`, a folder bearing a temp file's name.
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import type { Session } from '@keel/session'
import { appendBigWriteTurn, appendSampleTurn } from '@keel/store-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { tempHome } from './helpers.js'

const homes: string[] = []
function home(): string {
  const h = tempHome()
  homes.push(h)
  return h
}
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true })
})

/** A stored session `id` of `store` holding what `append` appended, closed. */
async function stored(store: JsonlStore, id: string, append: (session: Session) => unknown): Promise<void> {
  const handle = await store.create({ id })
  append(handle.session)
  await handle.close()
}

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!isKeelError(error)) throw new Error(`expected a KeelError, got ${String(error)}`)
  return { code: error.code, message: error.message, details: error.details }
}

describe('misplaced files and folders', () => {
  it('a file in place of the sessions folder: list and create are STORE_UNAVAILABLE naming it', async () => {
    const h = home()
    writeFileSync(join(h, 'sessions'), 'not a folder')
    const store = new JsonlStore({ home: h })
    for (const work of [store.list(), store.create({ id: 'a' })]) {
      const refused = await refusal(work)
      expect(refused.code).toBe('STORE_UNAVAILABLE')
      expect(refused.message).toContain(
        `the store at ${join(h, 'sessions')} cannot be used: that path is not a folder`,
      )
      expect(refused.details).toMatchObject({ reason: 'not-a-folder', transient: false })
    }
  })

  it("a file in place of a session's folder: create with that id is SESSION_CORRUPT naming it", async () => {
    const h = home()
    mkdirSync(join(h, 'sessions'))
    writeFileSync(join(h, 'sessions', 'a'), 'not a folder')
    const refused = await refusal(new JsonlStore({ home: h }).create({ id: 'a' }))
    expect(refused.code).toBe('SESSION_CORRUPT')
    expect(refused.message).toContain(`${join(h, 'sessions', 'a')}: it is a file, not a folder`)
  })

  it('a file in place of `blobs`: a session without blobs opens; one with a blob names it missing', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store, 'plain', appendSampleTurn)
    writeFileSync(join(h, 'sessions', 'plain', 'blobs'), 'not a folder')
    const reopened = await store.open('plain')
    expect(reopened.session.nextSeq).toBeGreaterThan(0)
    await reopened.close()

    await stored(store, 'big', appendBigWriteTurn)
    rmSync(join(h, 'sessions', 'big', 'blobs'), { recursive: true })
    writeFileSync(join(h, 'sessions', 'big', 'blobs'), 'not a folder')
    const refused = await refusal(store.open('big'))
    expect(refused.code).toBe('SESSION_CORRUPT')
    expect(refused.message).toMatch(/which is missing/)
  })

  it("an old folder bearing a temp file's name is not swept (only files a writer left are)", async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store, 's', appendSampleTurn)
    const odd = join(h, 'sessions', 's', '.session.jsonl.0123abcd.tmp')
    const left = join(h, 'sessions', 's', '.session.jsonl.4567cdef.tmp')
    mkdirSync(odd)
    writeFileSync(left, 'a killed create')
    const old = new Date(Date.now() - 24 * 3600_000)
    utimesSync(odd, old, old)
    utimesSync(left, old, old)
    const reopened = await store.open('s')
    await reopened.close()
    expect(existsSync(odd)).toBe(true)
    expect(existsSync(left)).toBe(false)
  })
})
