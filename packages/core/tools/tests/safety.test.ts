import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  AsideFile,
  createToolContext,
  DEFAULT_TOOL_TIMEOUT_MS,
  defineTool,
  runToolCall,
  type ToolContext,
  type ToolOutput,
  toolEnvironment,
  toolTimeoutMs,
} from '../src/index.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-tools-safety-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const annotations = { readOnly: true, destructive: false, openWorld: false, idempotent: true }

function tool(impl: (ctx: ToolContext) => Promise<ToolOutput | string>, timeoutMs?: number) {
  return defineTool<Record<string, never>>({
    name: 'probe',
    description: 'test tool',
    inputSchema: z.strictObject({}),
    annotations,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    call: (_input, ctx) => impl(ctx),
  })
}

const textOf = (o: ToolOutput) => o.content.map((b) => (b.type === 'text' ? b.text : `<image>`)).join('\n')

describe('per-call deadline', () => {
  it('a tool that honours its signal ends as TOOL_TIMEOUT at its own deadline', async () => {
    const t = tool(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
        }),
      150,
    )
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), { outputDir: dir })
    expect(outcome.output.errorCode).toBe('TOOL_TIMEOUT')
    expect(textOf(outcome.output)).toContain('deadline')
  }, 20_000)

  it('a tool that ignores its signal is abandoned after the grace period with TOOL_TIMEOUT (caller deadline)', async () => {
    const t = tool(() => new Promise(() => {}))
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), {
      outputDir: dir,
      timeoutMs: 100,
      abortGraceMs: 100,
    })
    expect(outcome.output.errorCode).toBe('TOOL_TIMEOUT')
    expect(outcome.ran).toBe(true)
  }, 20_000)

  it('a tool that returns its partial output when stopped keeps it, under TOOL_TIMEOUT', async () => {
    const t = tool(
      (ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener(
            'abort',
            () =>
              resolve({
                content: [{ type: 'text', text: 'half done' }],
                isError: true,
                errorCode: 'TOOL_ABORTED',
              }),
            { once: true },
          )
        }),
      100,
    )
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), { outputDir: dir })
    expect(outcome.output.errorCode).toBe('TOOL_TIMEOUT')
    expect(textOf(outcome.output)).toContain('half done')
  }, 20_000)

  it("timeoutsByTool configures one tool's deadline over its own; toolTimeoutMs says which applies", async () => {
    const t = tool(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
        }),
      60_000,
    )
    expect(toolTimeoutMs(t, {}, {})).toBe(60_000)
    expect(toolTimeoutMs(t, {}, { timeoutsByTool: { probe: 120 } })).toBe(120)
    expect(
      toolTimeoutMs(
        tool(async () => 'x'),
        {},
        {},
      ),
    ).toBe(DEFAULT_TOOL_TIMEOUT_MS)
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), {
      outputDir: dir,
      timeoutsByTool: { probe: 120 },
    })
    expect(outcome.output.errorCode).toBe('TOOL_TIMEOUT')
  }, 20_000)

  it('a user abort stays TOOL_ABORTED, not TOOL_TIMEOUT', async () => {
    const controller = new AbortController()
    const t = tool(
      (ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
          setTimeout(() => controller.abort(), 20)
        }),
      60_000,
    )
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir, signal: controller.signal }))
    expect(outcome.output.errorCode).toBe('TOOL_ABORTED')
  }, 20_000)
})

describe('output is sane text before it becomes an event', () => {
  it('NUL becomes ␀ and lone surrogates U+FFFD, even under the cap', async () => {
    const t = tool(async () => ({ content: [{ type: 'text', text: 'a\0b\uD800c\uDC00d😀' }] }))
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), { outputDir: dir })
    const text = textOf(outcome.output)
    expect(text).toBe('a\u2400b\uFFFDc\uFFFDd😀')
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text)
    expect(JSON.stringify(outcome.output)).not.toContain('\\u0000')
  })
})

describe('image blocks are capped too', () => {
  it('images past the image budget are stored aside byte for byte and named in the text', async () => {
    const small = Buffer.alloc(3000, 7).toString('base64')
    const bigBytes = Buffer.alloc(600_000)
    for (let i = 0; i < bigBytes.length; i++) bigBytes[i] = (i * 31) & 0xff
    const big = bigBytes.toString('base64')
    const t = tool(async () => ({
      content: [
        { type: 'text', text: 'two screenshots' },
        { type: 'image', data: small, mediaType: 'image/png' },
        { type: 'image', data: big, mediaType: 'image/png' },
      ],
    }))
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir, callId: 'c1' }), {
      outputDir: dir,
      maxImageChars: 100_000,
    })
    const images = outcome.output.content.filter((b) => b.type === 'image')
    expect(images).toHaveLength(1)
    expect(images[0]).toMatchObject({ data: small })
    const text = textOf(outcome.output)
    const path = /saved in (\S+\.png)/.exec(text)?.[1]
    expect(path).toBeDefined()
    expect((await readFile(path!)).equals(bigBytes)).toBe(true)
    expect(Buffer.byteLength(JSON.stringify(outcome.output))).toBeLessThan(200_000)
  })

  it('the default image budget keeps a result under the 1 MiB event limit', async () => {
    const data = Buffer.alloc(1_200_000, 1).toString('base64')
    const t = tool(async () => ({ content: [{ type: 'image', data, mediaType: 'image/jpeg' }] }))
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), { outputDir: dir })
    expect(outcome.output.content.every((b) => b.type === 'text')).toBe(true)
    expect(Buffer.byteLength(JSON.stringify(outcome.output))).toBeLessThan(1024 * 1024)
    expect(await readdir(dir)).toEqual([expect.stringMatching(/\.jpg$/)])
  })
})

describe('stored-aside disk cap and tool-written files', () => {
  it('the stored file stops at the per-call disk cap and the notice says so', async () => {
    const full = 'é'.repeat(50_000)
    const t = tool(async () => full)
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir }), {
      outputDir: dir,
      maxResultChars: 1000,
      maxStoredBytes: 10_001,
    })
    const path = outcome.storedAside!.path
    expect((await stat(path)).size).toBe(10_000) // cut on a character boundary
    expect(outcome.storedAside!.chars).toBe(5_000)
    expect(textOf(outcome.output)).toContain('disk cap')
  })

  it('a tool that streamed its complete output aside is named, not stored twice', async () => {
    const t = tool(async (ctx) => {
      const file = new AsideFile(ctx.aside!, ctx.callId)
      for (let i = 0; i < 1000; i++) file.write(`line ${i}\n`)
      const summary = await file.close()
      return {
        content: [{ type: 'text', text: 'window of it' }],
        storedAside: { path: summary.path, chars: summary.chars },
      }
    })
    const outcome = await runToolCall(t, '{}', createToolContext({ cwd: dir, callId: 'streamed' }), {
      outputDir: dir,
    })
    expect(outcome.storedAside?.path).toBe(join(dir, 'streamed.txt'))
    expect(await readdir(dir)).toEqual(['streamed.txt'])
    expect((await readFile(join(dir, 'streamed.txt'), 'utf8')).split('\n')).toHaveLength(1001)
  })

  it('AsideFile cuts at the disk cap and counts what it discarded', async () => {
    const file = new AsideFile({ dir, maxBytes: 25 }, 'cap')
    file.write('0123456789')
    file.write('0123456789')
    file.write('0123456789')
    const summary = await file.close()
    expect(summary).toMatchObject({ bytes: 25, chars: 25, discardedChars: 5 })
    expect(await readFile(summary.path, 'utf8')).toBe('0123456789012345678901234')
  })
})

describe('toolEnvironment', () => {
  const source = {
    PATH: '/usr/bin',
    HOME: '/home/u',
    PWD: '/work',
    DEEPSEEK_API_KEY: 'sk-live-123',
    GITHUB_TOKEN: 'ghp_x',
    AWS_SECRET_ACCESS_KEY: 'aws',
    PGPASSWORD: 'pw',
    KEEL_PG_URL: 'postgres://keel:hunter2@localhost/keel',
    PLAIN_URL: 'https://example.com/x',
    CUSTOM: 'holds sk-adapter-999 inside',
    SSH_AUTH_SOCK: '/tmp/agent.sock',
  }

  it('drops credentials by name, by URL password and by known secret value by default', () => {
    const { env, dropped } = toolEnvironment({ secretValues: ['sk-adapter-999'] }, {}, source)
    expect(Object.keys(env).sort()).toEqual(['HOME', 'PATH', 'PLAIN_URL', 'PWD', 'SSH_AUTH_SOCK'])
    expect(dropped).toEqual([
      'AWS_SECRET_ACCESS_KEY',
      'CUSTOM',
      'DEEPSEEK_API_KEY',
      'GITHUB_TOKEN',
      'KEEL_PG_URL',
      'PGPASSWORD',
    ])
  })

  it('allow wins, deny adds, dropCredentials:false inherits, extra is always set', () => {
    const a = toolEnvironment({ allow: ['github_*'], deny: ['HOME', 'ssh_*'] }, { EXTRA: '1' }, source).env
    expect(a.GITHUB_TOKEN).toBe('ghp_x')
    expect(a.HOME).toBeUndefined()
    expect(a.SSH_AUTH_SOCK).toBeUndefined()
    expect(a.EXTRA).toBe('1')
    expect(a.DEEPSEEK_API_KEY).toBeUndefined()
    expect(toolEnvironment({ dropCredentials: false }, {}, source).env.DEEPSEEK_API_KEY).toBe('sk-live-123')
  })
})
