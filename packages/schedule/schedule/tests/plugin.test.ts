import type { PluginContext, PluginDefinition } from '@keel/agent'
import { soloContext } from '@keel/agent/testing'
import type { UserMessage } from '@keel/llm'
import { Session } from '@keel/session'
import type { Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { type ScheduleConfig, scheduleConfigSchema, schedulePlugin } from '../src/index.js'
import { callTool, FakeClock, MINUTE, outputText, T0 } from './helpers.js'

/** Sets the real plugin up on a real Session with a fake clock, recording what it asks of the host. */
async function setup(rawConfig: unknown = {}, session?: Session) {
  const clock = new FakeClock(T0)
  const s = session ?? Session.create('plugin', {}, undefined, { clock: () => clock.now() })
  const tools = new Map<string, Tool<unknown>>()
  const enqueued: Array<{ message: UserMessage; source?: string }> = []
  const displayed: string[] = []
  const solo = soloContext(
    schedulePlugin as PluginDefinition<unknown>,
    scheduleConfigSchema.parse(rawConfig),
    {
      session: s,
      clock,
      enqueue: (message, source) => enqueued.push({ message, ...(source ? { source } : {}) }),
      display: ({ kind, text }) => displayed.push(`${kind}: ${text}`),
    },
  )
  const ctx = solo.context as PluginContext<ScheduleConfig>
  const dispose = await schedulePlugin.setup!(ctx)
  solo.done()
  for (const tool of solo.tools) tools.set(tool.name, tool)
  const call = (name: string, args: unknown) => callTool(tools.get(name)!, args, s)
  return { session: s, clock, tools, enqueued, displayed, dispose: dispose as () => void, call }
}

describe('schedule tools', () => {
  it('registers schedule_create, schedule_list and schedule_delete with truthful annotations', async () => {
    const p = await setup()
    expect([...p.tools.keys()]).toEqual(['schedule_create', 'schedule_list', 'schedule_delete'])
    expect(p.tools.get('schedule_list')!.annotations.readOnly).toBe(true)
    expect(p.tools.get('schedule_delete')!.annotations.destructive).toBe(true)
  })

  it('create, list and delete through the real tools runtime', async () => {
    const p = await setup({ timezone: 'UTC' })
    const created = await p.call('schedule_create', { kind: 'every', when: '30m', prompt: 'check CI' })
    expect(created.isError).toBeUndefined()
    expect(outputText(created)).toContain('s1: every 30m, next 2026-01-05T08:30:00.000Z')
    await p.call('schedule_create', { kind: 'cron', when: '0 9 * * *', prompt: 'morning' })
    const listed = outputText(await p.call('schedule_list', {}))
    expect(listed.split('\n')).toHaveLength(2)
    expect(listed).toContain("s2: cron '0 9 * * *' (UTC), next 2026-01-05T09:00:00.000Z")
    const deleted = await p.call('schedule_delete', { id: 's1' })
    expect(outputText(deleted)).toBe('Deleted schedule s1 (every 30m).')
    expect(outputText(await p.call('schedule_list', {}))).not.toContain('s1:')
  })

  it('answers bad requests with error results the model can act on, by code', async () => {
    const p = await setup()
    const cases: Array<[string, unknown, string]> = [
      ['schedule_create', { kind: 'after', when: 'soon', prompt: 'x' }, 'SCHEDULE_DURATION_INVALID'],
      ['schedule_create', { kind: 'cron', when: '* * *', prompt: 'x' }, 'SCHEDULE_CRON_INVALID'],
      ['schedule_create', { kind: 'every', when: '10s', prompt: 'x' }, 'SCHEDULE_INTERVAL_TOO_SHORT'],
      ['schedule_create', { kind: 'at', when: '2020-01-01T00:00:00Z', prompt: 'x' }, 'SCHEDULE_TIME_IN_PAST'],
      ['schedule_create', { kind: 'weekly', when: '1d', prompt: 'x' }, 'TOOL_INPUT_INVALID'],
      ['schedule_delete', { id: 's7' }, 'SCHEDULE_NOT_FOUND'],
    ]
    for (const [tool, args, code] of cases) {
      const output = await p.call(tool, args)
      expect(output.isError, `${tool} ${JSON.stringify(args)}`).toBe(true)
      expect(output.errorCode).toBe(code)
      expect(outputText(output)).toContain(code)
    }
    expect(p.session.events).toEqual([])
  })
})

describe('schedule plugin', () => {
  it('delivers a due schedule through ctx.enqueue with source schedule/<id>, and shows it fired', async () => {
    const p = await setup()
    await p.call('schedule_create', { kind: 'after', when: '5m', prompt: 'look at the logs' })
    await p.clock.advance(5 * MINUTE)
    expect(p.enqueued).toHaveLength(1)
    expect(p.enqueued[0]!.source).toBe('schedule/s1')
    expect(p.enqueued[0]!.message.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('look at the logs'),
    })
    expect(p.displayed).toEqual(['schedule-fired: Schedule s1 (after 5m) fired.'])
  })

  it('stops firing once disposed', async () => {
    const p = await setup()
    await p.call('schedule_create', { kind: 'every', when: '5m', prompt: 'tick' })
    p.dispose()
    await p.clock.advance(30 * MINUTE)
    expect(p.enqueued).toEqual([])
    expect(p.clock.pending).toBe(0)
  })

  it('a session whose schedule stream is invalid is refused on load, before any setup', () => {
    expect(() =>
      Session.create('bad', {}, [
        {
          type: 'schedule/change',
          seq: 0,
          time: T0,
          data: { v: 1, op: 'dispatch', id: 's1', dueAt: T0, firedAt: T0 },
        },
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'EVENT_INVARIANT_VIOLATED',
        details: expect.objectContaining({ invariantCode: 'SCHEDULE_STREAM_UNKNOWN_ID' }),
      }),
    )
  })
})
