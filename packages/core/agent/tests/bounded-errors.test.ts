import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type Tool } from '@keel/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { definePlugin, usePlugin } from '../src/index.js'
import { rig } from './helpers.js'

const MB = 1 << 20
/** A key of one megabyte: what a misbehaving model can put in a call's arguments. */
const HUGE_KEY = 'k'.repeat(MB)

const strict = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  inputSchema: z.strictObject({ word: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  call: async ({ word }) => `found ${word}`,
}) as Tool<unknown>

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function outputDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bounded-'))
  dirs.push(dir)
  return dir
}

/** The tool message of a recorded chat request body, and the whole body's size. */
function toolMessageOf(body: unknown): string {
  const messages = (body as { messages: Array<{ role: string; content: unknown }> }).messages
  return JSON.stringify(messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '')
}

describe('errors that echo input are bounded', () => {
  it('a call whose arguments carry a 1 MB key gets a short TOOL_INPUT_INVALID, and the next request carries only the call itself', async () => {
    const r = await rig(
      [
        // large argument fragments: the 1 MB is streamed in 16 chunks, not 150,000
        {
          toolCalls: [{ name: 'lookup', arguments: { word: 'x', [HUGE_KEY]: 1 } }],
          chunking: { arguments: 65_536 },
        },
        { text: 'Sorry.' },
      ],
      { tools: [strict], toolOutputDir: outputDir() },
    )
    try {
      const result = await r.agent.send('Look it up.')
      expect(result.reason).toBe('completed')
      const [toolResult] = r.events('tool/result')
      expect(toolResult!.data.errorCode).toBe('TOOL_INPUT_INVALID')
      const text = JSON.stringify(toolResult!.data.message.content)
      // names the key, elided, and says what to do; a few hundred characters, not a megabyte
      expect(text).toContain('Unrecognized key')
      expect(text).toContain('characters elided')
      expect(text.length).toBeLessThan(1_000)
      const next = r.server.requests[1]!
      expect(toolMessageOf(next.body).length).toBeLessThan(1_000)
      // the request repeats the model's own call (1 MB of arguments) and nothing else of that size
      expect(next.rawBody.length).toBeLessThan(MB + 20_000)
    } finally {
      await r.close()
    }
  })

  it('an error result a plugin builds (a block reason of 1 MB) goes through the size cap like any output', async () => {
    const blocker = definePlugin({
      name: 'blocker',
      setup(ctx) {
        ctx.intercept({ afterTool: () => ({ action: 'block', reason: `withheld ${'r'.repeat(MB)}` }) })
      },
    })
    const dir = outputDir()
    const r = await r_(blocker, dir)
    try {
      await r.agent.send('Look it up.')
      const [toolResult] = r.events('tool/result')
      expect(toolResult!.data.errorCode).toBe('TOOL_RESULT_BLOCKED')
      const text = toolResult!.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
      expect(text.length).toBeLessThanOrEqual(30_000)
      // the complete text is stored aside and named, as for any capped output
      const aside = toolResult!.data.storedAside!
      expect(aside.path.startsWith(dir)).toBe(true)
      expect(readFileSync(aside.path, 'utf8')).toContain('r'.repeat(1000))
      expect(r.server.requests[1]!.rawBody.length).toBeLessThan(40_000)
    } finally {
      await r.close()
    }
  })
})

function r_(plugin: ReturnType<typeof definePlugin>, dir: string) {
  return rig([{ toolCalls: [{ name: 'lookup', arguments: { word: 'x' } }] }, { text: 'Ok.' }], {
    tools: [strict],
    toolOutputDir: dir,
    plugins: [usePlugin(plugin)],
  })
}
