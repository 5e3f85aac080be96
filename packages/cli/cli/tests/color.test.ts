import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { colorWanted } from '../src/color.js'
import { withoutColor } from '../src/tui/no-color.js'

describe('colorWanted: FORCE_COLOR, NO_COLOR, a terminal', () => {
  const cases: Array<[Record<string, string>, boolean, boolean]> = [
    [{}, true, true],
    [{}, false, false],
    [{ NO_COLOR: '1' }, true, false],
    [{ NO_COLOR: 'anything' }, true, false],
    [{ NO_COLOR: '' }, true, true], // set but empty: as if unset (no-color.org)
    [{ FORCE_COLOR: '0' }, true, false],
    [{ FORCE_COLOR: 'false' }, true, false],
    [{ FORCE_COLOR: '1' }, false, true],
    [{ FORCE_COLOR: '' }, false, true],
    [{ FORCE_COLOR: '3' }, false, true],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, true, true], // as in Node: FORCE_COLOR decides first
    [{ FORCE_COLOR: '0', NO_COLOR: '' }, true, false],
  ]
  it.each(cases)('%j on a terminal: %s → %s', (env, tty, wanted) => {
    expect(colorWanted(env, tty)).toBe(wanted)
  })
})

/** Every SGR parameter list in `text`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: reading terminal escapes is the point
const sgrs = (text: string) => [...text.matchAll(/\x1b\[([0-9;:]*)m/gu)].map((m) => m[1])

describe('withoutColor', () => {
  it.each([
    ['\x1b[31mred\x1b[39m', 'red'],
    ['\x1b[1;31mbold red\x1b[22;39m', '\x1b[1mbold red\x1b[22m'],
    ['\x1b[38;5;208mx\x1b[0m', 'x\x1b[0m'],
    ['\x1b[1;38;2;1;2;3;4mx', '\x1b[1;4mx'],
    ['\x1b[48:2::1:2:3;7mx\x1b[27m', '\x1b[7mx\x1b[27m'],
    ['\x1b[7m \x1b[27m', '\x1b[7m \x1b[27m'], // the cursor
    ['\x1b[m', '\x1b[m'],
    ['\x1b[2J\x1b[H\x1b[?25l', '\x1b[2J\x1b[H\x1b[?25l'], // not SGR: kept
    ['\x1b[90;100mdim\x1b[49m', 'dim'],
  ])('%j → %j', (input, output) => {
    expect(withoutColor(input)).toBe(output)
  })

  it('leaves no colour parameter and changes nothing else', () => {
    const color = fc.oneof(
      fc.integer({ min: 30, max: 37 }).map(String),
      fc.integer({ min: 90, max: 97 }).map(String),
      fc.integer({ min: 100, max: 107 }).map(String),
      fc.constantFrom('39', '49', '38;5;12', '48;2;1;2;3'),
    )
    const style = fc.constantFrom('1', '2', '3', '4', '7', '22', '27', '0')
    const sgr = fc
      .array(fc.oneof(color, style), { minLength: 1, maxLength: 4 })
      .map((p) => `\x1b[${p.join(';')}m`)
    const text = fc.array(
      fc.oneof(
        sgr,
        fc.string({ maxLength: 5 }).map((s) => s.replaceAll('\x1b', '')),
      ),
    )
    fc.assert(
      fc.property(text, (parts) => {
        const out = withoutColor(parts.join(''))
        for (const params of sgrs(out))
          for (const p of params!.split(';')) expect(['1', '2', '3', '4', '7', '22', '27', '0']).toContain(p)
        // biome-ignore lint/suspicious/noControlCharactersInRegex: reading terminal escapes is the point
        const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/gu, '')
        expect(strip(out)).toBe(strip(parts.join('')))
      }),
      { seed: 20261201 },
    )
  })
})
