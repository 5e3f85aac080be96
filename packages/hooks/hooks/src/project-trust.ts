// The project's settings files are code from the repository: their hook commands would run
// with the person's rights as soon as `keel` starts in a checkout (a SessionStart hook needs
// no prompt at all). They run only once a person approved them in this session (`/hooks
// approve`), recorded in the log like the session's approval rules, and only for the exact
// definitions approved; the user's own files (and the preset's inline hooks) run as before.
import { createHash } from 'node:crypto'
import type { ChildSessions } from '@keel/agent'
import { canonicalJson, type JsonValue } from '@keel/base'
import { type Projection, registerProjection, type Session } from '@keel/session'
import type { HookHandler, HookSourceId, LoadedHooks } from './config.js'

/** The sources whose files live in the project (the repository), not in the user's home. */
export const PROJECT_HOOK_SOURCES: ReadonlySet<HookSourceId | 'inline'> = new Set([
  'keel-project',
  'claude-project',
  'claude-local',
  'codex-project',
])

/** Whether `handler` comes from one of the project's settings files. */
export const isProjectHandler = (handler: HookHandler): boolean => PROJECT_HOOK_SOURCES.has(handler.source)

/** The person's latest answer about the project's hooks in this session. */
export interface ProjectHooksAnswer {
  readonly digest: string
  readonly decision: 'approved' | 'rejected'
}

/** Folds `hook/project-approval` (the latest wins); resume and fork rebuild it exactly. */
export const projectHooksProjection: Projection<ProjectHooksAnswer | null> =
  registerProjection<ProjectHooksAnswer | null>({
    name: '@keel/hooks/project-approval',
    init: () => null,
    apply: (state, event) =>
      event.type === 'hook/project-approval'
        ? { digest: event.data.digest, decision: event.data.decision }
        : state,
    checkpoint: {
      version: 1,
      save: (state) => state as unknown as JsonValue,
      restore: (saved) => saved as unknown as ProjectHooksAnswer | null,
    },
  })

/**
 * The digest of the project's hook definitions (what runs, where, on what): an approval
 * holds for exactly these, so a hook added or edited since is asked about again.
 */
export function projectHooksDigest(loaded: LoadedHooks): string {
  const definitions = loaded.handlers.filter(isProjectHandler).map((h) => ({
    id: h.id,
    point: h.point,
    matcher: h.matcher ?? null,
    command: h.command,
    timeout: h.timeoutSeconds ?? null,
  }))
  const settings = { handlers: definitions, disableAllHooks: loaded.projectDisabled }
  return `sha256:${createHash('sha256').update(canonicalJson(settings)).digest('hex')}`
}

/**
 * Whether the project's hooks run: `trusted` (the preset vouches for the project), else
 * `approved` / `rejected` by the person's answer for these very definitions, else
 * `waiting` (never answered, or the hooks changed since: `changed`).
 */
export type ProjectHooksGate =
  | { readonly state: 'trusted' | 'approved' | 'rejected' }
  | { readonly state: 'waiting'; readonly changed: boolean }

/** Whether the project's settings are in force: its hooks run, and its `disableAllHooks` applies. */
export const projectHooksRun = (gate: ProjectHooksGate): boolean =>
  gate.state === 'trusted' || gate.state === 'approved'

/** The gate of the project's hooks whose digest is `digest` (see {@link ProjectHooksGate}). */
export function projectHooksGate(
  trusted: boolean,
  digest: string,
  answer: ProjectHooksAnswer | null,
): ProjectHooksGate {
  if (trusted) return { state: 'trusted' }
  if (answer === null) return { state: 'waiting', changed: false }
  if (answer.digest !== digest) return { state: 'waiting', changed: true }
  return { state: answer.decision }
}

/** Whether the project's settings files hold anything that waits for approval: a hook, or `disableAllHooks`. */
export const hasProjectSettings = (loaded: LoadedHooks): boolean =>
  loaded.projectDisabled || loaded.handlers.some(isProjectHandler)

/** `SessionStart ×1, PreToolUse (Bash) ×2`: what the project's hooks would run on (and a `disableAllHooks`). */
export function describeProjectHooks(loaded: LoadedHooks): string {
  const counts = new Map<string, number>()
  for (const h of loaded.handlers.filter(isProjectHandler)) {
    const key = h.matcher === undefined || h.matcher === '' ? h.point : `${h.point} (${h.matcher})`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const parts = [...counts].map(([key, n]) => `${key} ×${n}`)
  if (loaded.projectDisabled) parts.push('"disableAllHooks": true')
  return parts.join(', ')
}

/** One line on the project hooks' state, with what to type. */
export function projectHooksState(gate: ProjectHooksGate): string {
  switch (gate.state) {
    case 'trusted':
      return "the project's hooks run: the preset trusts the project (trustProject)"
    case 'approved':
      return "the project's hooks run: you approved them for this session (/hooks reject stops them)"
    case 'rejected':
      return "the project's hooks do not run: you turned them down for this session (/hooks approve runs them)"
    case 'waiting':
      return `the project's hooks do not run until you approve them for this session${gate.changed ? ' (they changed since you last answered)' : ''}: /hooks approve, or /hooks reject`
  }
}

/**
 * What to tell the person at start about the project's hooks, when they are held: how to
 * approve them, or (headless) that nobody can.
 */
export function projectHooksNotice(
  loaded: LoadedHooks,
  gate: ProjectHooksGate,
  headless: boolean,
): string | undefined {
  if (!hasProjectSettings(loaded) || projectHooksRun(gate)) return undefined
  const what = describeProjectHooks(loaded)
  if (headless)
    return `the project's hooks do not run in a headless session (nobody can approve them): ${what}; a preset for a project you trust sets trustProject in the hooks config`
  return `this project's settings files define hooks (${what}): ${projectHooksState(gate)}`
}

/**
 * The answer about the project's hooks of the session that delegated to `session` (a
 * subagent's parent), read from the store; null when it delegates from nobody, nothing
 * waits for an answer, or there is no store to read it from (`sessions`).
 */
export async function delegatorAnswer(
  session: Session,
  sessions: ChildSessions | undefined,
  loaded: LoadedHooks,
  trusted: boolean,
): Promise<ProjectHooksAnswer | null> {
  const parent = session.header.delegatedBy?.session
  if (parent === undefined || trusted || !hasProjectSettings(loaded) || sessions === undefined) return null
  return (await sessions.load(parent)).project(projectHooksProjection)
}
