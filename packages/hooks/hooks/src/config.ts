import { join } from 'node:path'
import { boundIssues, errorMessage, readBoundedText } from '@keel/base'
import { z } from 'zod'
import { HookError } from './errors.js'
import { compileMatcher, type Matcher } from './matcher.js'
import { PROJECT_HOOK_SOURCES } from './project-trust.js'

/** The hook points Keel fires, named as Claude Code names them. */
export const HOOK_POINTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PreCompact',
  'Stop',
  'SessionEnd',
] as const
export type HookPoint = (typeof HOOK_POINTS)[number]

/** Whose rules a handler was written for: results are read the way that tool reads them. */
export type HookDialect = 'keel' | 'claude' | 'codex'

/** Where hook configuration can come from, in precedence order (see {@link HOOK_SOURCES}). */
export type HookSourceId =
  | 'keel-user'
  | 'keel-project'
  | 'claude-user'
  | 'claude-project'
  | 'claude-local'
  | 'codex-user'
  | 'codex-project'

/** Directories the sources are found in. */
export interface HookLocations {
  /** The project directory (the agent's cwd). */
  readonly projectDir: string
  /** The user's home directory (`~`). */
  readonly home: string
  /** `$KEEL_HOME`, default `~/.keel`. */
  readonly keelHome: string
  /** `$CODEX_HOME`, default `~/.codex`. */
  readonly codexHome: string
}

/** Every source: its id, dialect and file, in the order their handlers are listed. */
export const HOOK_SOURCES: ReadonlyArray<{
  readonly id: HookSourceId
  readonly dialect: HookDialect
  file(at: HookLocations): string
}> = [
  { id: 'keel-user', dialect: 'keel', file: (at) => join(at.keelHome, 'settings.json') },
  { id: 'keel-project', dialect: 'keel', file: (at) => join(at.projectDir, '.keel', 'settings.json') },
  { id: 'claude-user', dialect: 'claude', file: (at) => join(at.home, '.claude', 'settings.json') },
  { id: 'claude-project', dialect: 'claude', file: (at) => join(at.projectDir, '.claude', 'settings.json') },
  {
    id: 'claude-local',
    dialect: 'claude',
    file: (at) => join(at.projectDir, '.claude', 'settings.local.json'),
  },
  { id: 'codex-user', dialect: 'codex', file: (at) => join(at.codexHome, 'hooks.json') },
  { id: 'codex-project', dialect: 'codex', file: (at) => join(at.projectDir, '.codex', 'hooks.json') },
]

/** Sources read when the plugin config names none: Keel's and Claude Code's (Codex is opt-in). */
export const DEFAULT_HOOK_SOURCES: readonly HookSourceId[] = [
  'keel-user',
  'keel-project',
  'claude-user',
  'claude-project',
  'claude-local',
]

/** One command handler, ready to run. */
export interface HookHandler {
  /** Stable id: `<source>:<JSON path>` (`claude-project:hooks.PreToolUse[0].hooks[1]`). */
  readonly id: string
  readonly source: HookSourceId | 'inline'
  readonly dialect: HookDialect
  readonly point: HookPoint
  /** The matcher as written (absent when the group has none). */
  readonly matcher?: string
  readonly matches: Matcher
  /** A shell command line. */
  readonly command: string
  /** The handler's own timeout; the point's default applies when absent. */
  readonly timeoutSeconds?: number
}

/** The whole hook set of an agent. */
export interface LoadedHooks {
  readonly handlers: readonly HookHandler[]
  /** The files that existed and were read. */
  readonly files: readonly string[]
  /** Things skipped on purpose (unknown events, non-command handlers, duplicates). */
  readonly warnings: readonly string[]
  /** A Keel or Claude Code file of the user's (or the inline hooks) set `"disableAllHooks": true`: no handler runs. */
  readonly disabled: boolean
  /**
   * A Keel or Claude Code file of the project's set `"disableAllHooks": true`: no handler
   * runs once the project's settings are in force (approved or trusted); while they are
   * held, the user's own hooks still run.
   */
  readonly projectDisabled: boolean
}

const seconds = z.number().positive().max(86_400)

const handlerSchema = z
  .looseObject({
    type: z.string(),
    command: z.string().optional(),
    timeout: seconds.optional(),
    /** Codex's alias of `timeout`. */
    timeoutSec: seconds.optional(),
  })
  .superRefine((handler, ctx) => {
    if (handler.type === 'command' && (handler.command === undefined || handler.command.trim() === '')) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'a command handler needs a non-empty "command"',
      })
    }
  })

const groupSchema = z.looseObject({ matcher: z.string().optional(), hooks: z.array(handlerSchema) })

/** The part of a settings / hooks.json file Keel reads. Other keys are left alone. */
export const hookSettingsSchema = z.looseObject({
  disableAllHooks: z.boolean().optional(),
  hooks: z.record(z.string(), z.array(groupSchema)).optional(),
})

/** Validates one parsed settings document; `file` names it in errors. */
export function parseHookSettings(value: unknown, file: string): z.output<typeof hookSettingsSchema> {
  const result = hookSettingsSchema.safeParse(value)
  if (result.success) return result.data
  const bounded = boundIssues(result.error.issues)
  const issues = bounded.issues.map((issue) => ({ ...issue, path: issue.path || '(top level)' }))
  const first = issues[0]!
  const others = issues.length - 1 + bounded.more
  throw new HookError(
    'HOOK_CONFIG_INVALID',
    `${file}: ${first.path}: ${first.message}${others > 0 ? ` (and ${others} more)` : ''}; fix the hook settings and start again`,
    { file, path: first.path, issues },
  )
}

/** A settings file larger than this is not read (Claude Code's and Keel's are a few KiB). */
const MAX_SETTINGS_BYTES = 16 * 1024 * 1024

/** Reads one file: undefined when it does not exist; typed errors for anything else. */
function readSettingsFile(file: string): unknown {
  let text: string
  try {
    const read = readBoundedText(file, MAX_SETTINGS_BYTES)
    if (read.kind === 'missing') return undefined
    if (read.kind !== 'text') {
      throw new HookError(
        'HOOK_CONFIG_UNREADABLE',
        `${file}: the hook settings are ${read.kind === 'too-large' ? `larger than ${MAX_SETTINGS_BYTES} bytes` : `${read.what}, not a regular file`}; not read (remove it or point the hook sources elsewhere)`,
        { file, path: '(file)' },
      )
    }
    text = read.text
  } catch (error) {
    if (error instanceof HookError) throw error
    throw new HookError(
      'HOOK_CONFIG_UNREADABLE',
      `${file}: cannot read the hook settings (${errorMessage(error)}); fix its permissions or remove it from the hook sources`,
      { file, path: '(file)' },
      { cause: error },
    )
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new HookError(
      'HOOK_CONFIG_INVALID',
      `${file}: not valid JSON (${errorMessage(error)}); fix the file and start again`,
      { file, path: '(file)' },
      { cause: error },
    )
  }
}

/** What {@link loadHooks} reads. */
export interface LoadHooksOptions {
  readonly sources: readonly HookSourceId[]
  readonly locations: HookLocations
  /** Hooks given in the plugin config (same layout as a settings file), listed last. */
  readonly inline?: unknown
}

interface Document {
  readonly source: HookSourceId | 'inline'
  readonly dialect: HookDialect
  readonly file: string
  readonly settings: z.output<typeof hookSettingsSchema>
}

const knownPoints = new Set<string>(HOOK_POINTS)

/**
 * Reads and validates every selected source, then builds the hook set. All-or-nothing: the
 * first bad file throws a {@link HookError} naming the file and the JSON path, and nothing is
 * returned, so an agent never starts with half its hooks.
 *
 * Merge rules (Claude Code's): handler lists of all sources are concatenated, never
 * overridden, in {@link HOOK_SOURCES} order, then inline hooks. A Keel or Claude Code handler
 * identical to an earlier one (same point, matcher, command and timeout) runs once; Codex
 * handlers are never deduplicated (Codex runs every copy). Events Keel does not fire and
 * handler types other than `command` are skipped with a warning.
 */
export function loadHooks(options: LoadHooksOptions): LoadedHooks {
  const documents: Document[] = []
  const files: string[] = []
  for (const source of HOOK_SOURCES) {
    if (!options.sources.includes(source.id)) continue
    const file = source.file(options.locations)
    const raw = readSettingsFile(file)
    if (raw === undefined) continue
    files.push(file)
    documents.push({
      source: source.id,
      dialect: source.dialect,
      file,
      settings: parseHookSettings(raw, file),
    })
  }
  if (options.inline !== undefined) {
    const file = 'plugin config'
    documents.push({
      source: 'inline',
      dialect: 'keel',
      file,
      settings: parseHookSettings({ hooks: options.inline }, file),
    })
  }

  const handlers: HookHandler[] = []
  const warnings: string[] = []
  const seen = new Set<string>()
  let disabled = false
  let projectDisabled = false
  for (const { source, dialect, file, settings } of documents) {
    if (settings.disableAllHooks === true && dialect !== 'codex') {
      if (PROJECT_HOOK_SOURCES.has(source)) projectDisabled = true
      else disabled = true
    }
    for (const [point, groups] of Object.entries(settings.hooks ?? {})) {
      if (!knownPoints.has(point)) {
        warnings.push(`${file}: hooks.${point}: Keel does not fire this event; its handlers are ignored`)
        continue
      }
      groups.forEach((group, g) => {
        const groupPath = `hooks.${point}[${g}]`
        const matches = compileMatcher(group.matcher, { file, path: `${groupPath}.matcher` })
        group.hooks.forEach((handler, h) => {
          const path = `${groupPath}.hooks[${h}]`
          if (handler.type !== 'command') {
            warnings.push(
              `${file}: ${path}: handler type "${handler.type}" is not supported; only "command" runs`,
            )
            return
          }
          const timeoutSeconds = handler.timeout ?? handler.timeoutSec
          const key = JSON.stringify([point, group.matcher ?? '', handler.command, timeoutSeconds ?? null])
          if (dialect !== 'codex') {
            if (seen.has(key)) {
              warnings.push(`${file}: ${path}: the same handler is configured earlier; it runs once`)
              return
            }
            seen.add(key)
          }
          handlers.push({
            id: `${source}:${path}`,
            source,
            dialect,
            point: point as HookPoint,
            ...(group.matcher === undefined ? {} : { matcher: group.matcher }),
            matches,
            command: handler.command!,
            ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
          })
        })
      })
    }
  }
  return { handlers: disabled ? [] : handlers, files, warnings, disabled, projectDisabled }
}
