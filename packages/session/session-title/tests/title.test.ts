import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cleanTitle, foldTitle, MAX_TITLE_CHARS, titleOfEvents, userTitle } from '../src/index.js'

describe('cleanTitle', () => {
  it.each([
    ['Fix the greet test', 'Fix the greet test'],
    ['Title: "Fix the greet test."', 'Fix the greet test'],
    ['\n\n# Session title: **Migrate to zod**\nmore text', 'Migrate to zod'],
    ['“修复问候测试”。', '修复问候测试'],
    ['- `Refactor   the   loader`', 'Refactor the loader'],
    ['   \n  ', undefined],
    ['""', undefined],
  ])('%j → %j', (answer, title) => {
    expect(cleanTitle(answer)).toBe(title)
  })

  it('cuts a long answer at a word with an ellipsis', () => {
    const title = cleanTitle(
      'Investigate why the nightly integration build fails on the arm64 runners only sometimes',
    )
    expect(title).toBe('Investigate why the nightly integration build fails on the…')
  })

  it('always gives one line of printable text within the cap', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (answer) => {
        const title = cleanTitle(answer)
        if (title === undefined) return
        expect([...title].length).toBeLessThanOrEqual(MAX_TITLE_CHARS)
        expect([...title].every((c) => c >= ' ' && c !== '\u007f')).toBe(true)
        expect(title.trim()).toBe(title)
        expect(title).not.toBe('')
      }),
      { seed: 24, numRuns: 400 },
    )
  })
})

describe('whose title wins', () => {
  it('a person’s title is never replaced by the model’s, and the latest person’s wins', () => {
    const model = { title: 'm', source: 'model' as const }
    const user = { title: 'u', source: 'user' as const }
    expect(foldTitle(foldTitle({}, model), user)).toEqual(user)
    expect(foldTitle(foldTitle({}, user), model)).toEqual(user)
    expect(foldTitle(foldTitle({}, user), { title: 'u2', source: 'user' })).toEqual({
      title: 'u2',
      source: 'user',
    })
  })

  it('reads stored lines, skipping what does not validate', () => {
    expect(
      titleOfEvents([
        { type: 'session/title', data: { title: 'first', source: 'model' } },
        { type: 'session/title', data: { title: '', source: 'user' } },
        { type: 'session/title', data: { title: 'x', source: 'robot' } },
        'garbage',
        { type: 'turn/start', data: { turn: 1 } },
        { type: 'session/title', data: { title: 'mine', source: 'user' } },
        { type: 'session/title', data: { title: 'later model', source: 'model' } },
      ]),
    ).toBe('mine')
    expect(titleOfEvents([])).toBeUndefined()
  })

  it('a person’s title is one trimmed line', () => {
    expect(userTitle('  Release\n 2.0  ')).toBe('Release 2.0')
    expect(userTitle(' \n ')).toBeUndefined()
    expect([...userTitle('x'.repeat(300))!]).toHaveLength(200)
  })
})
