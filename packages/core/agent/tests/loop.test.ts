import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from '@keel/session'
import { MemoryStore } from '@keel/store'
import { defineTool } from '@keel/tools'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { backoffDelay } from '../src/index.js'
import { type Rig, rig, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

describe('backoffDelay', () => {
  it('stays within [half, all] of the capped exponential, and never below Retry-After', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
        (attempt, base, max, random, retryAfter) => {
          const delay = backoffDelay(
            attempt,
            { maxRetries: 9, baseDelayMs: base, maxDelayMs: max },
            () => random,
            retryAfter,
          )
          const exponential = Math.min(max, base * 2 ** (attempt - 1))
          expect(Number.isInteger(delay)).toBe(true)
          expect(delay).toBeGreaterThanOrEqual(Math.max(Math.floor(exponential / 2), retryAfter ?? 0))
          expect(delay).toBeLessThanOrEqual(Math.max(Math.ceil(exponential), retryAfter ?? 0))
        },
      ),
    )
  })
})

describe('durability and plumbing', () => {
  it('flushes the store before every model call, before tools run, and at the turn end', async () => {
    const session = Session.create('flushes')
    const flushedAt: number[] = []
    const requestsAtFlush: number[] = []
    let r!: Rig
    const handle = {
      session,
      flush: async () => {
        flushedAt.push(session.nextSeq)
        requestsAtFlush.push(r?.server.requests.length ?? 0)
      },
      close: async () => {},
    }
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      inputSchema: z.strictObject({ text: z.string() }),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      call: async (input) => input.text,
    })
    r = await open([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'done' }], {
      tools: [echo],
      session: handle,
    })
    await r.agent.send('go')
    const types = session.events.map((e) => e.type)
    // before call 1 (after the first step/start and its request header), before call 2 (after
    // the second step/start: its header is unchanged, so not recorded again), after turn/end
    expect(flushedAt.map((seq) => types[seq - 1])).toEqual([
      'request/header',
      'tool/call',
      'step/start',
      'turn/end',
    ])
    expect(requestsAtFlush).toEqual([0, 1, 1, 2])
  })

  it('stores an over-cap tool output aside in toolOutputDir and records where', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keel-agent-aside-'))
    const big = defineTool({
      name: 'big',
      description: 'Prints a lot.',
      inputSchema: z.strictObject({}),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      maxResultChars: 200,
      call: async () => Array.from({ length: 100 }, (_, i) => `line ${i} of a long output`).join('\n'),
    })
    const r = await open([{ toolCalls: [{ id: 'c1', name: 'big', arguments: {} }] }, { text: 'ok' }], {
      tools: [big],
      toolOutputDir: dir,
    })
    await r.agent.send('print')
    const result = r.events('tool/result')[0]!.data
    expect(result.storedAside).toBeDefined()
    expect(result.storedAside!.path.startsWith(dir)).toBe(true)
    expect(existsSync(result.storedAside!.path)).toBe(true)
    expect(readFileSync(result.storedAside!.path, 'utf8')).toContain('line 99 of a long output')
    expect(JSON.stringify(result.message.content).length).toBeLessThan(600)
  })

  it('keeps running when an observer throws, and reports it to the logger (never the console)', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const logged: Array<{ code: string; message: string }> = []
    try {
      const r = await open([{ text: 'fine' }], {
        logger: (entry) => logged.push(entry),
        observers: [
          {
            onTextDelta: () => {
              throw new Error('display broke')
            },
          },
        ],
      })
      const result = await r.agent.send('hi')
      expect(result).toMatchObject({ reason: 'completed', text: 'fine' })
      expect(logged[0]).toEqual({
        code: 'OBSERVER_FAILED',
        message: expect.stringContaining('display broke'),
      })
      expect(spy).not.toHaveBeenCalled()
    } finally {
      spy.mockRestore()
    }
  })

  it('close waits for queued turns before disposing and closing', async () => {
    const r = await open([{ text: 'a', delayMs: 5 }, { text: 'b' }])
    const first = r.agent.send('one')
    const second = r.agent.send('two')
    await r.agent.close()
    expect((await first).text).toBe('a')
    expect((await second).text).toBe('b')
    expect(r.events('turn/end')).toHaveLength(2)
  })

  it('continues turn numbers of a session that already has turns', async () => {
    const session = Session.create('resumed')
    session.append('turn/start', { turn: 1 })
    session.append('turn/end', { turn: 1, reason: 'interrupted' })
    const r = await open([{ text: 'hello again' }], { session })
    const result = await r.agent.send('hi')
    expect(result.turn).toBe(2)
  })

  it('rejects the send with the store error when the log cannot be made durable, without calling the model', async () => {
    const store = new MemoryStore({ failWrite: () => new Error('disk full') })
    const handle = await store.create()
    // opened without auto-close: this test closes it itself, expecting the write failure
    const r = await rig([{ text: 'never' }], { session: handle as never })
    const error = await r.agent.send('hi').catch((e: unknown) => e)
    expect(error).toMatchObject({
      code: 'SESSION_WRITE_FAILED',
      message: expect.stringContaining('disk full'),
    })
    expect(r.server.requests).toHaveLength(0)
    // the failed handle refuses further appends, so the turn stays open in memory; reopening
    // the session closes it as interrupted (the store's rule)
    expect(r.session.openTurn).toEqual({ turn: 1, step: 1 })
    expect(r.events('turn/end')).toHaveLength(0)
    await r.agent.close().catch(() => {}) // the handle's close reports the same write failure
    await r.server.close()
  })
})
