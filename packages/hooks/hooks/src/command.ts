import type { PluginCommand } from '@keel/agent'
import type { Session } from '@keel/session'
import { HOOK_SOURCES, type HookHandler, type HookLocations, type LoadedHooks } from './config.js'
import { HookError } from './errors.js'
import {
  describeProjectHooks,
  hasProjectSettings,
  isProjectHandler,
  PROJECT_HOOK_SOURCES,
  type ProjectHooksGate,
  projectHooksDigest,
  projectHooksRun,
  projectHooksState,
} from './project-trust.js'

const USAGE = '[list|approve|reject]'

/** What `/hooks` reads: the hook set, where its files are, and the project hooks' gate now. */
export interface HooksCommandContext {
  readonly session: Session
  readonly loaded: LoadedHooks
  readonly locations: HookLocations
  readonly gate: () => ProjectHooksGate
}

/** The settings file a handler comes from (`plugin config` for inline hooks). */
function fileOf(handler: HookHandler, at: HookLocations): string {
  return HOOK_SOURCES.find((s) => s.id === handler.source)?.file(at) ?? 'plugin config'
}

/**
 * The `/hooks` command: `list` (the default) shows every configured handler — where it
 * comes from, what it runs on, whether it runs now; `approve` / `reject` record the
 * person's answer about the project's hooks in the log (`hook/project-approval`, for the
 * definitions as they are now), which takes effect from the next hook point on.
 */
export function hooksCommand(ctx: HooksCommandContext): PluginCommand {
  const { session, loaded, locations } = ctx
  const list = (): string => {
    if (loaded.handlers.length === 0)
      return loaded.disabled
        ? 'no hooks run: a settings file sets "disableAllHooks": true'
        : loaded.files.length === 0
          ? 'no hooks configured: none of the settings files the hook sources name exists'
          : `no hooks configured in ${loaded.files.join(', ')}`
    const gate = ctx.gate()
    const held = !projectHooksRun(gate)
    if (loaded.projectDisabled && !held)
      return `no hooks run: the project's settings set "disableAllHooks": true (${projectHooksState(gate)})`
    const lines = loaded.handlers.map((h) => {
      const on = h.matcher === undefined || h.matcher === '' ? h.point : `${h.point} (${h.matcher})`
      const state = isProjectHandler(h) && held ? 'held' : 'runs'
      return `${state}  ${on}: ${h.command}  (${fileOf(h, locations)})`
    })
    return hasProjectSettings(loaded) ? `${lines.join('\n')}\n${projectHooksState(gate)}` : lines.join('\n')
  }
  // the project's settings files that were read
  const projectFiles = HOOK_SOURCES.filter((s) => PROJECT_HOOK_SOURCES.has(s.id))
    .map((s) => s.file(locations))
    .filter((file) => loaded.files.includes(file))
  const answer = (decision: 'approved' | 'rejected'): string => {
    if (!hasProjectSettings(loaded)) return "this project's settings files define no hooks"
    session.append('hook/project-approval', {
      digest: projectHooksDigest(loaded),
      decision,
      files: projectFiles,
    })
    return decision === 'approved'
      ? `approved the project's hooks for this session: ${describeProjectHooks(loaded)} (${projectFiles.join(', ')}); they run from the next hook point`
      : `turned down the project's hooks for this session: ${describeProjectHooks(loaded)}; they do not run`
  }
  return {
    description: "the hooks that run, and approve or reject the project's own (its settings files)",
    usage: USAGE,
    async run(args) {
      const words = args
        .trim()
        .split(/\s+/u)
        .filter((w) => w !== '')
      const [verb = 'list'] = words
      if (words.length > 1 || !['list', 'approve', 'reject'].includes(verb))
        throw new HookError('HOOK_COMMAND_INVALID', `usage: /hooks ${USAGE}`, { file: '/hooks', path: verb })
      if (verb === 'list') return list()
      return answer(verb === 'approve' ? 'approved' : 'rejected')
    },
  }
}
