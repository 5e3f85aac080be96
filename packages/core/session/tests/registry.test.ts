// Registration of generated validators: event type names, the invariant fold (append, load,
// fork) and the generated header validator.
import { EventRegistrationError, registerEvents, Session, SessionError } from '@keel/session'
import { describe, expect, it } from 'vitest'
import '../tests/fixtures/plugin/src/index.js'

function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('nothing was thrown')
}

const note = (text: string) => ({ note: { text, tags: [] } })

describe('registerEvents', () => {
  it('refuses event type names that are not owner/verb in lower-case kebab segments', () => {
    for (const bad of [
      'Todo/Write',
      'todo',
      'todo/',
      'todo//write',
      'todo/write_all',
      '/write',
      'todo/ write',
    ]) {
      const error = thrown(() => registerEvents('@keel/x', { [bad]: {} } as never))
      expect(error, bad).toBeInstanceOf(EventRegistrationError)
      expect((error as EventRegistrationError).code).toBe('EVENT_TYPE_NAME_INVALID')
      expect((error as Error).message).toContain(`'${bad}'`)
    }
  })
})

describe('invariant fold', () => {
  it('refuses an append that breaks it, changing nothing', () => {
    const s = Session.create('inv')
    s.append('fixture/note', note('a'))
    const error = thrown(() => s.append('fixture/note', note('a')))
    expect(error).toBeInstanceOf(SessionError)
    expect(error).toMatchObject({
      code: 'EVENT_INVARIANT_VIOLATED',
      details: { seq: 1, owner: '@keel/fixture-plugin', invariantCode: 'NOTE_REPEATED' },
    })
    expect(s.nextSeq).toBe(1)
    s.append('fixture/note', note('b'))
  })

  it('runs over the stored log on load, so a broken log is refused before any projection', () => {
    const log = [0, 1].map((seq) => ({ type: 'fixture/note', seq, time: 1, data: note('same') }))
    expect(thrown(() => Session.create('inv', {}, log))).toMatchObject({
      code: 'EVENT_INVARIANT_VIOLATED',
      details: { seq: 1 },
    })
    expect(Session.create('ok', {}, log.slice(0, 1)).nextSeq).toBe(1)
  })

  it('a fork inherits the folded state', () => {
    const parent = Session.create('p')
    parent.append('fixture/note', note('a'))
    const child = parent.fork('c')
    expect(thrown(() => child.append('fixture/note', note('a')))).toMatchObject({
      code: 'EVENT_INVARIANT_VIOLATED',
    })
  })
})

describe('header', () => {
  it('is checked by the validator generated from SessionHeader', () => {
    expect(thrown(() => Session.create('h', { seedLength: 1.5 }))).toMatchObject({
      code: 'HEADER_INVALID',
      details: { path: 'header.seedLength' },
    })
    expect(thrown(() => Session.create('h', { title: 3 } as never))).toMatchObject({ code: 'HEADER_INVALID' })
    expect(Session.create('h', { seedLength: 2, title: 't' }).header.seedLength).toBe(2)
  })
})
