import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { startScriptedServer } from '@keel/scripted-server'
import { registeredProjections } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { expect, it } from 'vitest'
import { createPresetAgent, definePreset } from '../src/index.js'

it('a session of every shipped plugin resumes from its checkpoint with the state a full replay gives', async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-presets-checkpoint-')))
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  await writeFile(join(cwd, 'notes.md'), '# notes\n')
  await writeFile(join(cwd, 'AGENTS.md'), 'Keep notes short.\n')
  const server = await startScriptedServer({
    script: [
      {
        toolCalls: [
          {
            name: 'todo_write',
            arguments: {
              todos: [
                { id: 'a', content: 'Read the notes', status: 'in_progress' },
                { id: 'b', content: 'Report', status: 'pending' },
              ],
            },
          },
          { name: 'read_file', arguments: { path: 'notes.md' } },
          { name: 'schedule_create', arguments: { kind: 'every', when: '1h', prompt: 'check the notes' } },
        ],
      },
      { text: 'read them' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# notes\nmore\n' } }] },
      { text: 'done' },
    ],
  })
  const home = join(base, 'keel')
  const store = new JsonlStore({ home, checkpoints: { every: 1, minEvents: 0 } })
  try {
    const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
    const preset = definePreset({
      id: 'every-plugin',
      description: 'every shipped plugin',
      plugins: [
        { use: '@keel/user-approval', config: { osSandbox: 'off' } },
        { use: '@keel/hooks', config: { home: base, keelHome: home, sources: ['keel-user'] } },
        { use: '@keel/compaction' },
        { use: '@keel/todo' },
        { use: '@keel/schedule' },
        { use: '@keel/permission-presets' },
        { use: '@keel/project-instructions', config: { keelHome: home } },
        { use: '@keel/plan-mode' },
        { use: '@keel/model-selection' },
        { use: '@keel/session-title' },
        { use: '@keel/subagents' },
        { use: '@keel/mcp', config: { projectServers: false, userServers: false } },
      ],
      tools: ['fs', 'shell'],
      policy: { approvalPolicy: 'never', sandboxMode: 'danger_full_access' },
    })
    const { agent } = await createPresetAgent({ llm, cwd, preset, store })
    await agent.send('Read the notes and keep a list.')
    await agent.send('Add a line.')
    const id = agent.session.id
    await agent.close()
    const resumed = await new JsonlStore({ home }).load(id)
    const replayed = await new JsonlStore({ home, checkpoints: false }).load(id)
    expect(resumed.residentFrom).toBe(resumed.nextSeq)
    expect(replayed.residentFrom).toBe(0)
    const names = registeredProjections().map((p) => p.name)
    expect(names).toEqual(
      expect.arrayContaining([
        '@keel/todo/list',
        '@keel/schedule/book',
        'fs/read-state',
        '@keel/user-approval/policy',
        '@keel/compaction/meter',
        '@keel/presets/selected',
        '@keel/agent/session-rules',
        '@keel/agent/inbox',
        '@keel/agent/offered-tools',
        '@keel/agent/request-log',
        '@keel/project-instructions',
        '@keel/plan-mode',
        '@keel/model-selection/selection',
        '@keel/permission-presets/selected',
        '@keel/session-title',
        '@keel/subagents/usage-totals',
        '@keel/mcp/servers',
        '@keel/mcp/project-approvals',
      ]),
    )
    for (const p of registeredProjections()) {
      expect(resumed.project(p), p.name).toEqual(replayed.project(p))
    }
    expect(JSON.parse(JSON.stringify(resumed.checkpoint()))).toEqual(
      JSON.parse(JSON.stringify(replayed.checkpoint())),
    )
    // and the non-trivial states really are there
    expect(JSON.stringify(resumed.checkpoint().projections['@keel/schedule/book'])).toContain(
      'check the notes',
    )
    expect(JSON.stringify(resumed.checkpoint().projections['fs/read-state'])).toContain('notes.md')
  } finally {
    await store.close()
    await server.close()
    await rm(base, { recursive: true, force: true })
  }
})
