import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'

const run = promisify(execFile)
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
})

async function chromium(args: string[]): Promise<string> {
  const { stdout } = await run(
    CHROMIUM ?? '/usr/bin/chromium',
    ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', ...args],
    { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
  )
  return stdout
}

describe('keel sessions export --html', () => {
  it('writes one self-contained page with the conversation, reasoning, tool calls and results', async () => {
    const r = await keelRig([
      {
        reasoning: 'First I look at the <notes> file.',
        text: 'Reading it.',
        toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }],
      },
      { text: 'The notes say: ship on Friday & celebrate.' },
    ])
    rigs.push(r)
    await writeFile(join(r.cwd, 'notes.txt'), 'ship on Friday & celebrate <b>not bold</b>\n')
    const first = await runKeel(
      ['-p', 'what do the notes say?', '--output', 'json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      {
        env: r.env,
      },
    )
    expect(first.code).toBe(0)
    const id = JSON.parse(first.stdout).session_id as string

    const toStdout = await runKeel(['sessions', 'export', id, '--html'], { env: r.env })
    expect(toStdout.code).toBe(0)
    const html = toStdout.stdout
    expect(html.startsWith('<!doctype html>')).toBe(true)
    expect(html).toContain('what do the notes say?')
    expect(html).toContain('First I look at the &#60;notes&#62; file.') // reasoning, escaped
    expect(html).toContain('→ read_file')
    expect(html).toContain('&#34;path&#34;: &#34;notes.txt&#34;') // arguments, pretty-printed
    expect(html).toContain('&#60;b&#62;not bold&#60;/b&#62;') // the tool result, escaped
    expect(html).toContain('The notes say: ship on Friday &#38; celebrate.')
    expect(html).toContain('preset coding')
    // self-contained: no script, no external resource
    expect(html).not.toMatch(/<script|<link|src="http|href="http|@import/iu)

    const file = join(r.cwd, 'session.html')
    const toFile = await runKeel(['sessions', 'export', id, '--html', '-o', file], { env: r.env })
    expect(toFile.code).toBe(0)
    expect(await readFile(file, 'utf8')).toBe(html)

    const usage = await runKeel(['sessions', 'export', id], { env: r.env })
    expect(usage.code).toBe(2)
  })

  // Under CI the browser must be there (.ci/run installs it): the test then fails rather than skips.
  it.skipIf(CHROMIUM === undefined && !process.env.CI)(
    'renders in headless Chromium (DOM and screenshot)',
    async () => {
      const r = await keelRig([
        {
          reasoning: 'Thinking about it.',
          text: 'Listing.',
          toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }],
        },
        { text: `Done. ${'A long answer line. '.repeat(30)}` },
      ])
      rigs.push(r)
      await writeFile(join(r.cwd, 'a.txt'), 'a\n')
      const first = await runKeel(
        ['-p', 'list the files', '--output', 'json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
        {
          env: r.env,
        },
      )
      const id = JSON.parse(first.stdout).session_id as string
      const file = join(r.cwd, 'session.html')
      expect((await runKeel(['sessions', 'export', id, '--html', '-o', file], { env: r.env })).code).toBe(0)

      const dom = await chromium(['--dump-dom', `file://${file}`])
      expect(dom).toContain('list the files')
      expect(dom).toContain('Thinking about it.')
      expect(dom).toContain('← list_dir ✓')

      const blank = join(r.cwd, 'blank.html')
      await writeFile(blank, '<!doctype html><html><body style="background:#fafafa"></body></html>')
      const shot = join(r.cwd, 'session.png')
      const blankShot = join(r.cwd, 'blank.png')
      await chromium([`--screenshot=${shot}`, '--window-size=1000,1400', `file://${file}`])
      await chromium([`--screenshot=${blankShot}`, '--window-size=1000,1400', `file://${blank}`])
      const png = await readFile(shot)
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
      // A page with text compresses far worse than an empty one of the same size.
      expect((await stat(shot)).size).toBeGreaterThan(3 * (await stat(blankShot)).size)
    },
  )
})

if (CHROMIUM === undefined) {
  process.stderr.write(
    'export.test.ts: no chromium at /usr/bin/chromium; the headless screenshot test is skipped\n',
  )
}
