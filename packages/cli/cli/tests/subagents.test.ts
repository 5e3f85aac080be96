import { spawn } from 'node:child_process'
import type { SessionEvent } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { KEEL_BIN, type KeelRig, keelRig, runKeel } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close()
})

const CHILD_PROMPT = 'You are a subagent of a coding agent'

function ofType<T extends SessionEvent['type']>(events: readonly SessionEvent[], type: T) {
  return events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type)
}

function systemOf(request: KeelRig['server']['requests'][number]): string {
  const first = request.body?.messages?.[0]
  return typeof first?.content === 'string' ? first.content : ''
}

/** Resolves once `predicate` holds, polling (the scripted server records requests as they arrive). */
async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1800; i++) {
    if (predicate()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('keel with subagents (real processes, JSONL store)', () => {
  it('SIGKILL while a child runs: the parent resumes with TOOL_INTERRUPTED, the child is listed, shown, exported and resumable alone', async () => {
    const rig = await keelRig([
      {
        toolCalls: [
          {
            id: 'call_task',
            name: 'task',
            arguments: { description: 'count files', prompt: 'Count the files here.' },
          },
        ],
      },
      // the child's first model call never ends: the parent is killed meanwhile
      { text: 'never sent', fault: { type: 'stall', afterChunks: 1 } },
    ])
    rigs.push(rig)
    const base = ['--base-url', rig.server.baseURL, '--cwd', rig.cwd]
    const proc = spawn(process.execPath, [KEEL_BIN, '-p', 'delegate the count', ...base], {
      env: rig.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      proc.once('exit', (_, signal) => resolve(signal)),
    )
    await until(
      () => rig.server.requests.some((r) => systemOf(r).includes(CHILD_PROMPT)),
      "the child's request",
    )
    proc.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')

    const store = new JsonlStore({ home: rig.home })
    const sessions = await store.list()
    const child = sessions.find((s) => s.delegatedBy !== undefined)!
    const parent = sessions.find((s) => s.delegatedBy === undefined)!
    expect(child.delegatedBy).toEqual({
      session: parent.id,
      turn: 1,
      callId: 'call_task',
      agent: 'general-purpose',
      depth: 1,
    })
    await store.close()

    // listed under its parent
    const list = await runKeel(['sessions', 'list'], { env: rig.env })
    expect(list.code).toBe(0)
    const lines = list.stdout.split('\n')
    const parentLine = lines.findIndex((l) => l.startsWith(parent.id))
    expect(lines[parentLine + 1]).toMatch(
      new RegExp(`^└ ${child.id}  .*subagent general-purpose \\(turn 1, call call_task\\)`, 'u'),
    )

    // the child's log is readable as it was left (no writer needed)
    const shown = await runKeel(['sessions', 'show', child.id], { env: rig.env })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(
      `child of ${parent.id}: subagent general-purpose (turn 1, call call_task), depth 1`,
    )
    expect(shown.stdout).toContain('Count the files here.')

    // resuming the parent: the unfinished call gets TOOL_INTERRUPTED before any request, and the model is told where the child's log is
    rig.server.enqueue({ text: 'The count was interrupted; I will redo it later.' })
    const resumed = await runKeel(['resume', parent.id, '-p', 'what happened?', ...base], { env: rig.env })
    expect(resumed.stderr).toContain('STALE_LOCK_TAKEN_OVER')
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('The count was interrupted')
    const request = rig.server.requests.at(-1)!.body!.messages!
    const call = request.findIndex((m) => m.tool_calls?.[0]?.id === 'call_task')
    expect(request[call + 1]).toMatchObject({ role: 'tool', tool_call_id: 'call_task' })
    expect(String(request[call + 1]!.content)).toContain('TOOL_INTERRUPTED')
    const told = request.filter(
      (m) => typeof m.content === 'string' && m.content.includes(`session ${child.id} keeps what it did`),
    )
    expect(told).toHaveLength(1)

    const shownParent = await runKeel(['sessions', 'show', parent.id], { env: rig.env })
    expect(shownParent.stdout).toContain(
      `general-purpose in session ${child.id} for call_task (keel sessions show ${child.id})`,
    )
    // the child had opened its first step when the process died
    expect(shownParent.stdout).toMatch(
      new RegExp(`subagent/settled +${child.id} interrupted · 1 steps · 0 tokens`, 'u'),
    )

    // the HTML export of the parent links into the child's conversation, which links back
    const exported = await runKeel(['sessions', 'export', parent.id, '--html'], { env: rig.env })
    expect(exported.code).toBe(0)
    expect(exported.stdout).toContain(`<a href="#session-${child.id}">session ${child.id}</a>`)
    expect(exported.stdout).toContain(`<section class="child" id="session-${child.id}">`)
    expect(exported.stdout).toContain(`child of <a href="#session-${parent.id}">`)

    // the child resumes on its own, with its recorded tools (no task tool at depth 1)
    rig.server.enqueue({ text: 'There are no files.' })
    const resumedChild = await runKeel(['resume', child.id, '-p', 'carry on', ...base], { env: rig.env })
    expect(resumedChild.code).toBe(0)
    expect(resumedChild.stdout).toContain('There are no files.')
    const childRequest = rig.server.requests.at(-1)!
    expect(systemOf(childRequest)).toContain(CHILD_PROMPT)
    expect(childRequest.body!.tools!.map((t) => t.function.name)).not.toContain('task')
    expect(childRequest.body!.tools!.map((t) => t.function.name)).toContain('read_file')

    const after = new JsonlStore({ home: rig.home })
    const parentLog = await after.load(parent.id)
    expect(ofType(parentLog.events, 'subagent/settled').map((e) => e.data.outcome)).toEqual(['interrupted'])
    const childLog = await after.load(child.id)
    expect(ofType(childLog.events, 'turn/end').map((e) => e.data.reason)).toEqual([
      'interrupted',
      'completed',
    ])
    await after.close()
  }, 240_000)
})
