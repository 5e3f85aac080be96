import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import { messageText } from '@keel/llm'
import { defineTool, type Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { definePlugin, type Interceptors, MAX_INPUT_REWRITES, type PluginContext } from '../src/index.js'
import { answerWith } from '../src/testing.js'
import { rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

function spy(name: string, interceptors: Interceptors, onSetup?: (ctx: PluginContext<unknown>) => void) {
  return definePlugin({
    name,
    setup(ctx) {
      onSetup?.(ctx)
      ctx.intercept(interceptors)
    },
  })
}

/** A tool naming a path (its facts resolve it against cwd); records the inputs it ran with. */
function pathTool() {
  const ran: string[] = []
  const tool: Tool<{ path: string }> = defineTool({
    name: 'touch',
    description: 'Touches a path.',
    inputSchema: z.strictObject({ path: z.string().min(1) }),
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: true },
    facts: (input, cwd) => ({ rawPaths: [input.path], resolvedPaths: [join(cwd, input.path)] }),
    async call(input) {
      ran.push(input.path)
      return `touched ${input.path}`
    },
  })
  return { tool: tool as Tool<unknown>, ran }
}

const touch = (path: string) => ({ toolCalls: [{ name: 'touch', arguments: { path } }] })

/** Rewrites `from` to `to` (and leaves every other input alone). */
const rewriter = (from: string, to: string, action: 'allow' | 'ask' = 'allow') =>
  spy('rewriter', {
    beforeTool: (info) => {
      const { path } = info.input as { path: string }
      if (path !== from) return action === 'ask' ? { action: 'ask', reason: 'check it' } : { action: 'allow' }
      return action === 'ask'
        ? { action: 'ask', reason: 'check it', input: { path: to } }
        : { action: 'allow', input: { path: to } }
    },
  })

/** Records the input and resolved paths it judged, and denies anything under `secret`. */
function judge(name: string) {
  const seen: Array<{ input: unknown; resolved: unknown }> = []
  const plugin = spy(name, {
    beforeTool: (info) => {
      seen.push({ input: info.input, resolved: info.facts.resolvedPaths })
      return (info.input as { path: string }).path.startsWith('secret')
        ? { action: 'deny', reason: 'secret path', errorCode: 'SECRET' }
        : { action: 'allow' }
    },
  })
  return { plugin, seen }
}

describe('beforeTool input rewrites', () => {
  it('the tool runs with the rewrite; every plugin judges the new input and facts; the log records it', async () => {
    const { tool, ran } = pathTool()
    const before = judge('before')
    const after = judge('after')
    const r = await open([touch('a.txt'), { text: 'ok' }], {
      plugins: [before.plugin, rewriter('a.txt', 'b.txt'), after.plugin],
      tools: [tool],
    })
    await r.agent.send('go')
    expect(ran).toEqual(['b.txt'])
    const cwd = process.cwd()
    // The plugin before the rewriter judged the original, then (the chain restarted) the rewrite.
    expect(before.seen).toEqual([
      { input: { path: 'a.txt' }, resolved: [join(cwd, 'a.txt')] },
      { input: { path: 'b.txt' }, resolved: [join(cwd, 'b.txt')] },
    ])
    expect(after.seen).toEqual([{ input: { path: 'b.txt' }, resolved: [join(cwd, 'b.txt')] }])
    expect(r.events('tool/call')[0]!.data.arguments).toBe('{"path":"a.txt"}')
    expect(r.events('tool/input-rewritten').map((e) => e.data)).toEqual([
      {
        turn: 1,
        step: 1,
        callId: r.events('tool/call')[0]!.data.callId,
        plugin: 'rewriter',
        arguments: '{"path":"b.txt"}',
      },
    ])
    expect(r.types().indexOf('tool/input-rewritten')).toBeLessThan(r.types().indexOf('tool/result'))
  })

  it('a rewrite cannot smuggle a path past a later or an earlier judge', async () => {
    for (const order of ['judge-first', 'judge-last'] as const) {
      const { tool, ran } = pathTool()
      const j = judge('judge')
      const rw = rewriter('fine.txt', 'secret/key')
      const r = await open([touch('fine.txt'), { text: 'ok' }], {
        plugins: order === 'judge-first' ? [j.plugin, rw] : [rw, j.plugin],
        tools: [tool],
      })
      await r.agent.send('go')
      expect(ran, order).toEqual([])
      expect(r.events('tool/result')[0]!.data.errorCode, order).toBe('SECRET')
    }
  })

  it('an input equal to the current one is no rewrite', async () => {
    const { tool, ran } = pathTool()
    const r = await open([touch('same.txt'), { text: 'ok' }], {
      plugins: [rewriter('same.txt', 'same.txt')],
      tools: [tool],
    })
    await r.agent.send('go')
    expect(ran).toEqual(['same.txt'])
    expect(r.events('tool/input-rewritten')).toEqual([])
  })

  it('a rewrite the tool schema refuses is denied (TOOL_INPUT_REWRITE_INVALID); nothing runs', async () => {
    const { tool, ran } = pathTool()
    const r = await open([touch('a.txt'), { text: 'ok' }], {
      plugins: [spy('bad', { beforeTool: () => ({ action: 'allow', input: { path: 42 } }) })],
      tools: [tool],
    })
    await r.agent.send('go')
    expect(ran).toEqual([])
    const result = r.events('tool/result')[0]!.data
    expect(result.errorCode).toBe('TOOL_INPUT_REWRITE_INVALID')
    expect(JSON.stringify(result.message.content)).toContain("plugin 'bad' rewrote the input")
  })

  it('a plugin that keeps rewriting is stopped (TOOL_INPUT_REWRITE_LOOP)', async () => {
    const { tool, ran } = pathTool()
    const growing = spy('growing', {
      beforeTool: (info) => ({
        action: 'allow',
        input: { path: `${(info.input as { path: string }).path}x` },
      }),
    })
    const r = await open([touch('a'), { text: 'ok' }], { plugins: [growing], tools: [tool] })
    await r.agent.send('go')
    expect(ran).toEqual([])
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('TOOL_INPUT_REWRITE_LOOP')
    expect(r.events('tool/input-rewritten')).toHaveLength(MAX_INPUT_REWRITES + 1)
  })

  it('ask with a rewrite: the answerer is asked about the new input, which then runs', async () => {
    const { tool, ran } = pathTool()
    const asked: unknown[] = []
    const r = await open([touch('a.txt'), { text: 'ok' }], {
      plugins: [rewriter('a.txt', 'b.txt', 'ask')],
      tools: [tool],
      answerers: [
        answerWith((question) => {
          asked.push({ input: question.input, plugin: question.plugin })
          return 'allow'
        }),
      ],
    })
    await r.agent.send('go')
    expect(asked).toEqual([{ input: { path: 'b.txt' }, plugin: 'rewriter' }])
    expect(ran).toEqual(['b.txt'])
  })
})

describe('host.sessionStart after a compaction', () => {
  it("runs every plugin's sessionStart with compact; the context is injected before the next step and returned", async () => {
    const sources: string[] = []
    const context = spy('context', {
      sessionStart: (info) => {
        sources.push(info.source)
        return info.source === 'compact'
          ? { action: 'continue', context: 'reloaded after compaction' }
          : { action: 'continue' }
      },
    })
    let host!: PluginContext<unknown>['trigger']
    const compactor = spy('compactor', {}, (ctx) => {
      host = ctx.trigger
    })
    const r = await open([{ text: 'one' }, { text: 'two' }], { plugins: [context, compactor] })
    await r.agent.send('first')
    expect(r.events('developer/message')).toHaveLength(0)
    const added = await host.sessionStart({ source: 'compact' })
    expect(added).toEqual([{ plugin: 'context', text: 'reloaded after compaction' }])
    expect(sources).toEqual(['startup', 'compact'])
    await r.agent.send('second')
    const dev = r.events('developer/message')
    expect(dev.map((e) => e.data.source)).toEqual(['plugin/context'])
    const types = r.types()
    expect(types.lastIndexOf('developer/message')).toBeGreaterThan(types.lastIndexOf('user/message'))
    expect(JSON.stringify(r.server.requests[1]!.body!.messages)).toContain('reloaded after compaction')
    await r.agent.close()
    const closed = await host.sessionStart({ source: 'compact' }).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(isKeelError(closed, 'PLUGIN_CONTEXT_CLOSED')).toBe(true)
  })
})

describe('the turn signal at promptSubmit and turnStopping', () => {
  it('is the turn abort signal: aborting the turn aborts it', async () => {
    const signals: Array<AbortSignal | undefined> = []
    let entered!: () => void
    const inside = new Promise<void>((resolve) => {
      entered = resolve
    })
    const waiting = spy('waiting', {
      promptSubmit: async (info) => {
        signals.push(info.signal)
        if (messageText(info.message) !== 'wait' || !info.signal) return { action: 'accept' }
        entered()
        await new Promise<void>((resolve) => info.signal!.addEventListener('abort', () => resolve()))
        return { action: 'block', reason: 'cancelled while checking' }
      },
      turnStopping: (info) => {
        signals.push(info.signal)
        return { action: 'stop' }
      },
    })
    const r = await open([{ text: 'ok' }], { plugins: [waiting] })
    const controller = new AbortController()
    const turn = r.agent.send('wait', { signal: controller.signal })
    await inside
    controller.abort()
    expect((await turn).reason).toBe('rejected')
    expect(signals[0]?.aborted).toBe(true)
    expect((await r.agent.send('go')).reason).toBe('completed')
    expect(signals.slice(1).map((s) => s instanceof AbortSignal && !s.aborted)).toEqual([true, true])
  })
})
