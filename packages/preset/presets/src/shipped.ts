import { definePreset, type Preset } from './preset.js'

/** `minimal`: the file and shell tools, nothing else. */
export const minimalPreset: Preset = definePreset({
  id: 'minimal',
  description: 'fs and shell tools only: no approval, no plugins',
  tools: ['fs', 'shell'],
})

/**
 * `coding`: every plugin Keel ships, with the file and shell tools. MCP runs no server until
 * one is configured (`$KEEL_HOME/mcp.json`, or an approved project `.mcp.json`).
 */
export const codingPreset: Preset = definePreset({
  id: 'coding',
  description:
    'day-to-day coding: approval (asks before risky calls), permission presets, project instructions, plan mode, hooks, compaction, /model, todo, schedule, session titles, subagents, MCP servers once configured, fs and shell',
  plugins: [
    { use: '@keel/user-approval' },
    { use: '@keel/permission-presets' },
    { use: '@keel/project-instructions' },
    { use: '@keel/plan-mode' },
    { use: '@keel/hooks' },
    { use: '@keel/compaction' },
    { use: '@keel/model-selection' },
    { use: '@keel/todo' },
    { use: '@keel/schedule' },
    { use: '@keel/session-title' },
    { use: '@keel/subagents' },
    { use: '@keel/mcp' },
  ],
  tools: ['fs', 'shell'],
  policy: { approvalPolicy: 'on_request', sandboxMode: 'workspace_write' },
})

/** `review`: read-only; no write tools, shell commands in a read-only sandbox. */
export const reviewPreset: Preset = definePreset({
  id: 'review',
  description: 'read-only review: no write tools, shell commands in a read-only sandbox',
  plugins: [{ use: '@keel/user-approval' }, { use: '@keel/project-instructions' }, { use: '@keel/todo' }],
  tools: ['fs-read', 'shell'],
  policy: { approvalPolicy: 'on_request', sandboxMode: 'read_only' },
})

/** `headless`: for CI; nobody is asked, whatever would be asked is refused (fails closed). */
export const headlessPreset: Preset = definePreset({
  id: 'headless',
  description: 'CI and scripts: never asks a person; what would need approval is refused',
  plugins: [
    { use: '@keel/user-approval' },
    { use: '@keel/project-instructions' },
    { use: '@keel/hooks' },
    { use: '@keel/compaction' },
    { use: '@keel/todo' },
  ],
  tools: ['fs', 'shell'],
  policy: { approvalPolicy: 'never', sandboxMode: 'workspace_write' },
  interactive: false,
})

/** The presets Keel ships, in the order `keel presets list` shows them. */
export const shippedPresets: readonly Preset[] = Object.freeze([
  minimalPreset,
  codingPreset,
  reviewPreset,
  headlessPreset,
])
