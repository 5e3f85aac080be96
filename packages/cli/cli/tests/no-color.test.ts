import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type KeelRig, writeStrictPreset } from './keel-process.js'
import { idle, type KeelPty, ptyTests } from './pty.js'

const { rig, open } = ptyTests()

/** Every colour parameter of every SGR sequence in `output` (foreground, background, 256/true colour, defaults). */
function colorParams(output: string): string[] {
  const found: string[] = []
  // biome-ignore lint/suspicious/noControlCharactersInRegex: reading terminal escapes is the point
  for (const [, params] of output.matchAll(/\x1b\[([0-9;:]*)m/gu)) {
    const parts = params!.split(';')
    for (let i = 0; i < parts.length; i++) {
      const code = Number.parseInt(parts[i]!.split(':')[0] || '0', 10)
      const color =
        (code >= 30 && code <= 39) ||
        (code >= 40 && code <= 49) ||
        (code >= 90 && code <= 97) ||
        (code >= 100 && code <= 107)
      if (color)
        found.push(parts.slice(i, i + (parts[i + 1] === '5' ? 3 : parts[i + 1] === '2' ? 5 : 1)).join(';'))
    }
  }
  return found
}

const ANSWER = [
  'Here is **the fix**:',
  '',
  '```js',
  'const answer = 42 // the answer',
  '```',
  '',
  'Done.',
].join('\n')

/** A prompt, a streamed markdown answer with a code block, then an edit asked about as a diff. */
async function session(env: (base: Record<string, string>) => Record<string, string>) {
  const r: KeelRig = await rig(
    { text: ANSWER, chunking: { text: 3 } },
    {
      toolCalls: [
        {
          name: 'edit_file',
          arguments: { path: 'greet.mjs', oldString: "return 'helo'", newString: "return 'hello'" },
        },
      ],
    },
    { text: 'Fixed.' },
  )
  await writeFile(join(r.cwd, 'greet.mjs'), "export function greet() {\n  return 'helo'\n}\n")
  await writeStrictPreset(r.home)
  const { NO_COLOR: _n, FORCE_COLOR: _f, ...base } = r.env
  const pty: KeelPty = open({ ...r, env: env(base) }, ['--preset', 'strict'])
  await pty.ready('› ')
  pty.write('typed')
  await pty.waitFor('typed')
  const cursorAtPrompt = await pty.inverseAfter('› typed')
  pty.write('\x15show me\r') // Ctrl-U empties the line
  await pty.waitFor('Done.')
  await idle(pty)
  pty.write('now fix greet\r')
  await pty.waitForScreen('the diff', (rows) => rows.some((row) => row.includes("+  return 'hello'")))
  pty.write('y')
  await pty.waitFor('Fixed.')
  await idle(pty)
  pty.write('ab')
  await pty.waitFor('› ab')
  const cursorAfter = await pty.inverseAfter('› ab')
  pty.write('\x15\x04')
  expect(await pty.exitCode()).toBe(0)
  return { output: pty.output, cursorAtPrompt, cursorAfter }
}

describe('NO_COLOR in interactive keel (a real pseudo-terminal)', { timeout: 180_000 }, () => {
  it('NO_COLOR=1: no colour reaches the terminal across a prompt, a markdown answer with code and an approval diff; the cursor stays visible', async () => {
    const seen = await session((base) => ({ ...base, NO_COLOR: '1' }))
    expect(colorParams(seen.output)).toEqual([])
    // keel's colour libraries load under FORCE_COLOR=1; Node warns of that next to NO_COLOR, over the UI
    expect(seen.output).not.toContain('Warning:')
    expect(seen.output).toContain('\x1b[1m') // bold stays
    expect(seen.cursorAtPrompt).toBe(true)
    expect(seen.cursorAfter).toBe(true)
  })

  it('FORCE_COLOR=0: no colour either, and still a visible cursor', async () => {
    const seen = await session((base) => ({ ...base, FORCE_COLOR: '0' }))
    expect(colorParams(seen.output)).toEqual([])
    expect(seen.cursorAtPrompt).toBe(true)
    expect(seen.cursorAfter).toBe(true)
  })

  it('without NO_COLOR the UI is in colour', async () => {
    const seen = await session((base) => base)
    expect(colorParams(seen.output).length).toBeGreaterThan(10)
    expect(seen.cursorAtPrompt).toBe(true)
    expect(seen.cursorAfter).toBe(true)
  })

  it('NO_COLOR empty is as if unset: colour', async () => {
    const seen = await session((base) => ({ ...base, NO_COLOR: '' }))
    expect(colorParams(seen.output).length).toBeGreaterThan(10)
  })
})
