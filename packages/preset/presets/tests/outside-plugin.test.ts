// The worked example of the plugin guide ("A plugin that works with the others"): a plugin
// written outside Keel that reads the approval policy and contributes a command, through the
// host's services and command registry alone — no import of another plugin's code.
import { mkdir, mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type PluginDefinition } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
// Types only: brings the `approval.policy` service key the approval plugin declares.
import type {} from '@keel/user-approval'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { builtinPlugins, createPluginCatalog, createPresetAgent, definePreset } from '../src/index.js'

/** `@acme/policy-guard`: `/lockdown` switches to the strict policy; every switch is announced. */
export const policyGuard: PluginDefinition<{ announce: boolean }> = definePlugin({
  name: '@acme/policy-guard',
  config: z.strictObject({ announce: z.boolean().default(true) }),
  requires: ['approval.policy'],
  setup(ctx) {
    const policy = ctx.use('approval.policy')
    ctx.registerCommand('lockdown', {
      description: 'ask before every command and write from now on',
      async run() {
        const before = policy.current().approvalPolicy
        if (before === 'strict') return 'already strict'
        policy.setApprovalPolicy('strict')
        return `approval policy ${before} → strict`
      },
    })
    const stop = policy.subscribe((now) => {
      if (ctx.config.announce) ctx.display('policy', `approval policy is now ${now.approvalPolicy}`)
    })
    return stop
  },
})

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup() {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-outside-plugin-')))
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  const server = await startScriptedServer({
    script: [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] },
      { text: 'done' },
    ],
  })
  const store = new JsonlStore({ home: join(base, 'keel') })
  cleanups.push(async () => {
    await store.close()
    await server.close()
  })
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
  const catalog = createPluginCatalog([
    ...builtinPlugins(),
    {
      use: '@acme/policy-guard',
      version: '1.0.0',
      config: policyGuard.config as z.ZodType<unknown>,
      description: 'switch to the strict policy with /lockdown',
      create: () => policyGuard as PluginDefinition<unknown>,
    },
  ])
  return { cwd, store, llm, catalog }
}

describe('a plugin from outside Keel, cooperating through services and commands alone', () => {
  it('reads and switches the approval policy, contributes /lockdown, and hears every switch', async () => {
    const { cwd, store, llm, catalog } = await setup()
    const preset = definePreset({
      id: 'guarded',
      description: 'approval plus the guard',
      plugins: [{ use: '@acme/policy-guard' }, { use: '@keel/user-approval', config: { osSandbox: 'off' } }],
      tools: ['fs'],
    })
    const shown: string[] = []
    const { agent } = await createPresetAgent({
      preset,
      store,
      llm,
      cwd,
      catalog,
      observers: [{ onDisplay: (n) => shown.push(`${n.source}: ${n.text}`) }],
    })
    cleanups.push(() => agent.close())
    // the guard requires the approval plugin's service: it is set up after it, whatever the listed order
    expect(agent.plugins).toEqual(['@keel/user-approval', '@acme/policy-guard'])
    expect(agent.commands().find((c) => c.name === 'lockdown')).toMatchObject({
      plugin: '@acme/policy-guard',
    })
    expect(await agent.runCommand('lockdown')).toBe('approval policy on_request → strict')
    expect(await agent.runCommand('lockdown')).toBe('already strict')
    expect(shown).toEqual(['@acme/policy-guard: approval policy is now strict'])
    // the switch is the approval plugin's, in the log: the next write is asked about (nobody answers here)
    await agent.send('write a.txt')
    const types = agent.session.events.map((e) => e.type)
    expect(types.filter((t) => t === 'approval/policy')).toHaveLength(1)
    expect(agent.session.events.find((e) => e.type === 'tool/result')!.data.errorCode).toBe(
      'APPROVAL_UNAVAILABLE',
    )
  })

  it('without the approval plugin, the preset is refused before anything runs, naming both plugins and the key', async () => {
    const { cwd, store, llm, catalog } = await setup()
    const preset = definePreset({
      id: 'unguarded',
      description: 'the guard alone',
      plugins: [{ use: '@acme/policy-guard' }],
      tools: ['fs'],
    })
    await expect(createPresetAgent({ preset, store, llm, cwd, catalog })).rejects.toMatchObject({
      code: 'PRESET_SERVICE_MISSING',
      message:
        'plugin \'@acme/policy-guard\' requires service \'approval.policy\', provided by plugin \'@keel/user-approval\', which preset "unguarded" does not include; add { "use": "@keel/user-approval" } to it',
      details: { plugin: '@acme/policy-guard', key: 'approval.policy', provider: '@keel/user-approval' },
    })
  })
})
