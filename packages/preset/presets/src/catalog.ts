import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { PluginDefinition } from '@keel/agent'
import { compactionConfigSchema, compactionPlugin } from '@keel/compaction'
import { hooksConfigSchema, hooksPlugin } from '@keel/hooks'
import type { LlmAdapter } from '@keel/llm'
import { mcpConfigSchema, mcpPlugin } from '@keel/mcp'
import { modelSelectionConfigSchema, modelSelectionPlugin } from '@keel/model-selection'
import { permissionPresetsConfigSchema, permissionPresetsPlugin } from '@keel/permission-presets'
import { planModeConfigSchema, planModePlugin } from '@keel/plan-mode'
import { projectInstructions, projectInstructionsConfigSchema } from '@keel/project-instructions'
import { scheduleConfigSchema, schedulePlugin } from '@keel/schedule'
import { sessionTitleConfigSchema, sessionTitlePlugin } from '@keel/session-title'
import { subagents, subagentsConfigSchema } from '@keel/subagents'
import { todoConfigSchema, todoPlugin } from '@keel/todo'
import { userApproval, userApprovalConfigSchema } from '@keel/user-approval'
import type { z } from 'zod'

/** What only the running program can give a plugin (never part of a preset's JSON). */
export interface PluginRuntime {
  /** The agent's model. */
  readonly llm: LlmAdapter
}

/** An installed plugin a preset can name with `use`. */
export interface PluginProvider {
  /** The name presets use, equal to the plugin's name (`@keel/todo`). */
  readonly use: string
  /** The version of the package that provides it. */
  readonly version: string
  /** Validates the config a preset gives it (plain JSON). */
  readonly config: z.ZodType<unknown>
  /** One sentence for `keel presets show`. */
  readonly description: string
  /** The directory of the package it was loaded from, for a plugin Keel does not ship. */
  readonly source?: string
  /** Builds the plugin for one agent. */
  create(runtime: PluginRuntime): PluginDefinition<unknown>
}

/** The plugins a preset may name, by `use`. */
export type PluginCatalog = ReadonlyMap<string, PluginProvider>

const require = createRequire(import.meta.url)

/**
 * The version in the manifest of the package `name` resolves to (found by walking up from
 * its entry file), so a recorded composition names what really ran.
 */
export function installedVersion(name: string): string {
  let dir = dirname(require.resolve(name))
  for (let i = 0; i < 8; i++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string
        version?: string
      }
      if (manifest.name === name && typeof manifest.version === 'string') return manifest.version
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return 'unknown'
}

/** Builds a catalog from providers; a second provider of the same `use` replaces the first. */
export function createPluginCatalog(providers: readonly PluginProvider[]): PluginCatalog {
  return new Map(providers.map((p) => [p.use, p]))
}

function provider(
  use: string,
  description: string,
  config: z.ZodType<unknown>,
  create: (runtime: PluginRuntime) => PluginDefinition<unknown>,
): PluginProvider {
  return { use, version: installedVersion(use), config, description, create }
}

/** Every plugin Keel ships, by `use`. */
export function builtinPlugins(): PluginProvider[] {
  return [
    provider(
      '@keel/user-approval',
      'approval policy, sandbox mode and asking the user before risky tool calls',
      userApprovalConfigSchema,
      () => userApproval() as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/permission-presets',
      'one-word permission presets (read-only, ask-always, auto-edit, full-access): /permissions, --permissions',
      permissionPresetsConfigSchema,
      () => permissionPresetsPlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/project-instructions',
      'AGENTS.md / CLAUDE.md from the repository root down, and $KEEL_HOME/AGENTS.md, for the model (/init drafts one)',
      projectInstructionsConfigSchema,
      () => projectInstructions() as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/plan-mode',
      'plan mode: only read-only tools until you approve the plan (/plan, --plan)',
      planModeConfigSchema,
      () => planModePlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/hooks',
      "Claude-Code- and Codex-compatible hook commands from the user's settings",
      hooksConfigSchema,
      () => hooksPlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/compaction',
      'prunes old tool output and summarizes old turns when the context fills up (/compact)',
      compactionConfigSchema as z.ZodType<unknown>,
      () => compactionPlugin() as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/model-selection',
      '/model and --model: switch the model (and reasoning effort) for the following steps',
      modelSelectionConfigSchema as z.ZodType<unknown>,
      () => modelSelectionPlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/todo',
      'the todo_write tool: a plan the model keeps, shown when it changes',
      todoConfigSchema,
      () => todoPlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/schedule',
      'reminders and recurring schedules the model can create',
      scheduleConfigSchema,
      () => schedulePlugin as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/subagents',
      'the task tool: delegates work to agents (.keel/agents, .claude/agents) in child sessions (/agents)',
      subagentsConfigSchema as z.ZodType<unknown>,
      () => subagents() as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/mcp',
      "tools of MCP servers (the preset's mcpServers, $KEEL_HOME/mcp.json, the project's .mcp.json once approved; /mcp)",
      mcpConfigSchema as z.ZodType<unknown>,
      () => mcpPlugin() as PluginDefinition<unknown>,
    ),
    provider(
      '@keel/session-title',
      'a short session title written by the model after the first turn of an attended session (/title sets yours)',
      sessionTitleConfigSchema,
      () => sessionTitlePlugin as PluginDefinition<unknown>,
    ),
  ]
}

let defaultCatalog: PluginCatalog | undefined

/** The catalog of {@link builtinPlugins} (built once). */
export function builtinCatalog(): PluginCatalog {
  defaultCatalog ??= createPluginCatalog(builtinPlugins())
  return defaultCatalog
}
