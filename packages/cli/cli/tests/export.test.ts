import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { answerWith } from '@keel/agent/testing'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { createPresetAgent, definePreset } from '@keel/presets'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { CHROMIUM, chromium, inkColumns, probePage, readPng } from './export-page.js'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
})

const ANSWER = [
  '## What changed',
  '',
  '- `notes.md` says **Friday** now',
  '- the cleanup was *not* run',
  '',
  '```js',
  'const day = "Friday"',
  '```',
  '',
  '| file | state |',
  '|---|---|',
  '| notes.md | edited |',
  '',
  'Raw <script>alert(1)</script> stays text; [a bad link](javascript:alert(1)), [a good one](https://example.org) and ![a remote image](http://example.org/x.png).',
].join('\n')

/**
 * A session with everything the page shows, made by a real agent on the rig's store: a todo
 * list, a read, an edit, a new file, a shell command asked about and allowed, one asked about
 * and rejected, a markdown answer, a policy switch and a second turn.
 */
async function richSession(r: KeelRig): Promise<string> {
  await writeFile(join(r.cwd, 'notes.md'), '# Notes\n\nShip on Thursday.\nCelebrate after.\n')
  r.server.enqueue(
    {
      reasoning: 'Plan first, then read the notes.',
      text: 'Let me plan and read.',
      toolCalls: [
        {
          name: 'todo_write',
          arguments: {
            todos: [
              { id: '1', content: 'Read the notes', status: 'completed' },
              { id: '2', content: 'Fix the day', status: 'in_progress', activeForm: 'Fixing the day' },
              { id: '3', content: 'Clean up', status: 'pending' },
            ],
          },
        },
        { name: 'read_file', arguments: { path: 'notes.md' } },
      ],
      usage: { promptTokens: 1200, completionTokens: 80, cacheHitTokens: 1000 },
    },
    {
      text: 'Editing.',
      toolCalls: [
        {
          name: 'edit_file',
          arguments: { path: 'notes.md', oldString: 'Ship on Thursday.', newString: 'Ship on Friday.' },
        },
        { name: 'bash', arguments: { command: 'echo checked' } },
      ],
      usage: { promptTokens: 1500, completionTokens: 60, cacheHitTokens: 1200 },
    },
    {
      text: 'Cleaning up.',
      toolCalls: [
        { name: 'bash', arguments: { command: 'rm -rf build' } },
        { name: 'write_file', arguments: { path: 'summary.md', content: 'Done:\n- day fixed\n' } },
      ],
      usage: { promptTokens: 1700, completionTokens: 50, cacheHitTokens: 1500 },
    },
    { text: ANSWER, usage: { promptTokens: 1900, completionTokens: 120, cacheHitTokens: 1700 } },
    { text: 'You are welcome.', usage: { promptTokens: 2000, completionTokens: 10, cacheHitTokens: 1900 } },
  )
  const store = new JsonlStore({ home: r.home })
  const built = await createPresetAgent({
    llm: createDeepSeekAdapter({ baseURL: r.server.baseURL, env: {} }),
    store,
    cwd: r.cwd,
    preset: definePreset({
      id: 'asking',
      description: 'asks before every shell command',
      plugins: [{ use: '@keel/user-approval', config: { osSandbox: 'off' } }, { use: '@keel/todo' }],
      tools: ['fs', 'shell'],
    }),
    answerers: [
      answerWith(
        (q) => ((q.input as { command?: string }).command?.startsWith('rm ') ? 'deny' : 'allow'),
        'export-test',
      ),
    ],
  })
  const { agent } = built
  const first = await agent.send('Fix the day in the notes, then clean up.')
  expect(first.reason).toBe('completed')
  // a person's `!cmd`: a call of its own, asked like the model's
  const direct = await agent.runTool('bash', { command: 'echo ran-by-hand' }, { source: 'user' })
  expect(direct.ran).toBe(true)
  await agent.runCommand('policy', 'strict', { source: 'user' })
  expect((await agent.send('Thanks!')).reason).toBe('completed')
  await agent.close()
  await store.close()
  return agent.session.id
}

describe('keel sessions export --html', { timeout: 180_000 }, () => {
  it('writes one self-contained page: calls with their results, diffs, the todo list, approvals, totals', async () => {
    const r = await keelRig()
    rigs.push(r)
    const id = await richSession(r)
    const toStdout = await runKeel(['sessions', 'export', id, '--html'], { env: r.env })
    expect(toStdout.code).toBe(0)
    const html = toStdout.stdout
    expect(html.startsWith('<!doctype html>')).toBe(true)
    expect(html).toContain('Fix the day in the notes, then clean up.')
    expect(html).toContain('Plan first, then read the notes.') // reasoning
    // the edit is a diff, not its JSON
    expect(html).toMatch(/<tr class="del"><td class="sign">-<\/td><td>Ship on Thursday\.<\/td><\/tr>/u)
    expect(html).toMatch(/<tr class="add"><td class="sign">\+<\/td><td>Ship on Friday\.<\/td><\/tr>/u)
    expect(html).not.toContain('oldString')
    expect(html).toContain('Fixing the day') // the todo list, in progress item by its active form
    expect(html).toContain('approval policy set to <b>strict</b>')
    // a command the user ran directly is a call with its approval and result, said to be theirs
    const at = html.indexOf('<div class="msg user direct">')
    const direct = at < 0 ? '' : html.slice(at, html.indexOf('\n', at))
    expect(direct).toContain('you ran directly')
    expect(direct).toContain('<span class="prompt">$</span> echo ran-by-hand')
    expect(direct).toContain('allowed once')
    expect(direct).toMatch(/<span class="status">✓<\/span><pre>ran-by-hand/u)
    // markdown rendered, and everything in it from the model kept inert
    expect(html).toContain('<h2>What changed</h2>')
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;')
    expect(html).not.toMatch(/<script|<link|src="http|href="javascript|@import/iu)
    expect(html).toContain('<a href="https://example.org" rel="noopener noreferrer">a good one</a>')
    // totals: tokens and cost
    expect(html).toContain('8,300</b><span>tokens in (7,300 cached)')
    expect(html).toMatch(/<b>\$[0-9.e-]+<\/b><span>cost at published prices/u)

    const file = join(r.cwd, 'session.html')
    const toFile = await runKeel(['sessions', 'export', id, '--html', '-o', file], { env: r.env })
    expect(toFile.code).toBe(0)
    expect(await readFile(file, 'utf8')).toBe(html)
    expect((await runKeel(['sessions', 'export', id], { env: r.env })).code).toBe(2)
  })

  // Under CI the browser must be there (.ci/run installs it): the test then fails rather than skips.
  it.skipIf(CHROMIUM === undefined && !process.env.CI)(
    'in headless Chromium: results sit inside their calls, the column uses the window, the screenshot shows it',
    async () => {
      const r = await keelRig()
      rigs.push(r)
      const id = await richSession(r)
      const file = join(r.cwd, 'session.html')
      expect((await runKeel(['sessions', 'export', id, '--html', '-o', file], { env: r.env })).code).toBe(0)

      type Facts = {
        calls: number
        resultsOutsideCalls: number
        callsWithoutResult: number
        diffRows: { add: number; del: number }
        todos: Array<[string, string]>
        approvals: string[]
        policy: string[]
        md: { h2: number; table: number; code: number; links: string[]; scripts: number; images: number }
        mainShare: number
      }
      const probe = `
        const q = (s, root = document) => [...root.querySelectorAll(s)]
        const calls = q('.call')
        return {
          calls: calls.length,
          resultsOutsideCalls: q('.result').filter((r) => !r.closest('.call')).length,
          callsWithoutResult: calls.filter((c) => !c.querySelector('.result')).length,
          diffRows: { add: q('table.diff tr.add').length, del: q('table.diff tr.del').length },
          todos: q('.todos li').map((li) => [li.className, li.textContent.trim()]),
          approvals: q('.approval').map((a) => a.className + ': ' + a.textContent),
          policy: q('.event.policy').map((e) => e.textContent),
          md: {
            h2: q('.md h2').length, table: q('.md table').length, code: q('.md pre code').length,
            links: q('.md a').map((a) => a.getAttribute('href')), scripts: q('script').length - 1, images: q('.md img').length,
          },
          mainShare: document.querySelector('main').getBoundingClientRect().width / window.innerWidth,
        }`
      const wide = await probePage<Facts>(file, probe, 1400)
      expect(wide.calls).toBe(7) // the model's six and the one run by hand
      expect(wide.resultsOutsideCalls).toBe(0)
      expect(wide.callsWithoutResult).toBe(0)
      // the edit (1 line each way) and the new file (2 lines)
      expect(wide.diffRows).toEqual({ add: 3, del: 1 })
      expect(wide.todos).toEqual([
        ['todo completed', '☑ Read the notes'],
        ['todo in_progress', '◐ Fixing the day'],
        ['todo pending', '☐ Clean up'],
      ])
      expect(wide.approvals).toHaveLength(3)
      expect(wide.approvals[0]).toMatch(/^approval ok: .*→ allowed once by the user \(export-test\)/u)
      expect(wide.approvals[2]).toMatch(/^approval ok: .*→ allowed once by the user \(export-test\)/u)
      expect(wide.approvals[1]).toMatch(
        /^approval no: .*→ rejected by the user \(export-test\) · “declined”/u,
      )
      expect(wide.policy).toEqual(['approval policy set to strict'])
      expect(wide.md).toEqual({
        h2: 1,
        table: 1,
        code: 1,
        links: ['https://example.org'],
        scripts: 0,
        images: 0,
      })
      expect(wide.mainShare).toBeGreaterThan(0.9)
      const narrow = await probePage<Facts>(file, probe, 800)
      expect(narrow.mainShare).toBeGreaterThan(0.9)

      const shot = join(r.cwd, 'session.png')
      await chromium([`--screenshot=${shot}`, '--window-size=1400,2400', `file://${file}`])
      const png = await readPng(shot)
      expect([png.width, png.height]).toEqual([1400, 2400])
      // what is drawn spans the window (a narrow column would leave wide empty margins)
      const ink = inkColumns(png)
      expect(ink.left).toBeLessThan(100)
      expect(ink.right).toBeGreaterThan(1300)
      const blank = join(r.cwd, 'blank.html')
      await writeFile(blank, '<!doctype html><html><body style="background:#f7f7f8"></body></html>')
      const blankShot = join(r.cwd, 'blank.png')
      await chromium([`--screenshot=${blankShot}`, '--window-size=1400,2400', `file://${blank}`])
      // A page with text compresses far worse than an empty one of the same size.
      expect((await stat(shot)).size).toBeGreaterThan(5 * (await stat(blankShot)).size)
      if (process.env.KEEL_KEEP_SCREENSHOT)
        await writeFile(process.env.KEEL_KEEP_SCREENSHOT, await readFile(shot))
    },
  )
})

if (CHROMIUM === undefined) {
  process.stderr.write(
    'export.test.ts: no chromium at /usr/bin/chromium; the headless screenshot test is skipped\n',
  )
}
