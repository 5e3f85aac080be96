// The project's hooks in a subagent: a child session follows the parent session's answer
// about them (the person approved them there), so a guard hook guards the child's calls too.
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { answerWith } from '@keel/agent/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { GENERAL, ofType, PARENT_PROMPT, type SubagentRig, subagentRig } from './subagents-rig.js'

let rig: SubagentRig
afterEach(async () => {
  await rig?.close()
})

const task = (prompt: string) => ({
  toolCalls: [{ id: 'call_1', name: 'task', arguments: { description: 'write it', prompt } }],
})

async function guardedRepo(cwd: string): Promise<void> {
  await mkdir(join(cwd, '.claude'), { recursive: true })
  await writeFile(
    join(cwd, '.claude', 'settings.json'),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo "guarded" >&2; exit 2' }] },
        ],
      },
    }),
  )
}

async function run(approve: boolean) {
  rig = await subagentRig()
  await guardedRepo(rig.cwd)
  rig.route(PARENT_PROMPT, task('write c.txt with the shell'), { text: 'done' })
  rig.route(
    GENERAL,
    { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'echo c > c.txt' } }] },
    { text: 'tried' },
  )
  const { agent } = await rig.parent({
    hooks: { sources: ['claude-project'] },
    answerers: [answerWith(() => 'allow')],
  })
  if (approve) await agent.runCommand('hooks', 'approve', { source: 'user' })
  expect(await agent.send('write c.txt')).toMatchObject({ reason: 'completed' })
  const [child] = ofType(agent.session.events, 'subagent/spawned').map((e) => e.data.child)
  const stored = await rig.store.load(child!)
  return ofType(stored.events, 'tool/result').map((e) => e.data.errorCode ?? 'ok')
}

describe("the project's hooks in a subagent", () => {
  it('approved in the parent session: they guard the child’s calls too', async () => {
    expect(await run(true)).toEqual(['HOOK_DENIED'])
    expect(existsSync(join(rig.cwd, 'c.txt'))).toBe(false)
  })

  it('not approved: held in the child as in the parent', async () => {
    expect(await run(false)).toEqual(['ok'])
    expect(existsSync(join(rig.cwd, 'c.txt'))).toBe(true)
  })
})
