import type { JsonValue } from '@keel/base'
import type { Projection, Session, SessionEvent } from '@keel/session'

/** Which tools read and which modify files, and the argument naming the path. */
export interface FileToolNames {
  /** Default `['read_file']`. */
  readonly read: readonly string[]
  /** Default `['write_file', 'edit_file']`. */
  readonly modify: readonly string[]
  /** The argument holding the path. Default `path`. */
  readonly pathArgument: string
}

/** The fs tools of `@keel/fs`. */
export const defaultFileTools: FileToolNames = Object.freeze({
  read: Object.freeze(['read_file']),
  modify: Object.freeze(['write_file', 'edit_file']),
  pathArgument: 'path',
})

/**
 * Where the working state comes from besides the log's tool calls: the services of the
 * plugins that run beside compaction (`todo.list`, `approval.policy`), absent when they
 * do not run.
 */
export interface WorkingStateSources {
  /** The todo list as the user sees it. */
  readonly todos?: () => string
  /** The run policy in force. */
  readonly policy?: () => { readonly approvalPolicy: string; readonly sandboxMode: string }
}

/** What the model was working with, rebuilt from the log (never from a summary). */
export interface WorkingState {
  /** The todo list as rendered by the todo plugin, when it runs. */
  readonly todos?: string
  /** The approval policy in force, when an approval plugin runs. */
  readonly approvalPolicy?: string
  /** The sandbox mode in force, when an approval plugin runs. */
  readonly sandboxMode?: string
  /** Paths read by a successful read tool call, oldest first, each once. */
  readonly filesRead: readonly string[]
  /** Paths written or edited by a successful call, oldest first, each once. */
  readonly filesModified: readonly string[]
}

/** A `tool/call` of a file tool whose result is not in yet. */
interface PendingFile {
  kind: 'read' | 'modify'
  path: string
}

/** The files read and modified so far, folded from the log. */
export interface FileState {
  readonly pending: ReadonlyMap<string, PendingFile>
  readonly read: readonly string[]
  readonly modified: readonly string[]
}

const withPath = (list: readonly string[], path: string): readonly string[] =>
  list.at(-1) === path ? list : [...list.filter((p) => p !== path), path]

/** Folds the files read and modified from `tool/call` and `tool/result` events of `tools`. */
export function fileActivityProjection(tools: FileToolNames): Projection<FileState> {
  return {
    // one state per tool configuration: a checkpoint keeps each under its own name
    name: `@keel/compaction/files(${tools.read.join(',')};${tools.modify.join(',')};${tools.pathArgument})`,
    init: () => ({ pending: new Map(), read: [], modified: [] }),
    apply(state, event: SessionEvent) {
      if (event.type === 'tool/call') {
        const kind = tools.read.includes(event.data.name)
          ? 'read'
          : tools.modify.includes(event.data.name)
            ? 'modify'
            : null
        if (kind === null) return state
        const path = pathOf(event.data.arguments, tools.pathArgument)
        if (path === undefined) return state
        const pending = new Map(state.pending)
        pending.set(event.data.callId, { kind, path })
        return { ...state, pending }
      }
      if (event.type === 'tool/result') {
        const call = state.pending.get(event.data.message.toolCallId)
        if (!call) return state
        const pending = new Map(state.pending)
        pending.delete(event.data.message.toolCallId)
        if (event.data.errorCode !== undefined) return { ...state, pending }
        return call.kind === 'read'
          ? { ...state, pending, read: withPath(state.read, call.path) }
          : { ...state, pending, modified: withPath(state.modified, call.path) }
      }
      if (event.type === 'turn/end' && state.pending.size > 0) return { ...state, pending: new Map() }
      return state
    },
    checkpoint: {
      version: 1,
      save: (state) =>
        ({ pending: [...state.pending], read: state.read, modified: state.modified }) as unknown as JsonValue,
      restore: (saved) => {
        const s = saved as unknown as { pending: [string, PendingFile][]; read: string[]; modified: string[] }
        return { pending: new Map(s.pending), read: s.read, modified: s.modified }
      },
    },
  }
}

function pathOf(args: string, key: string): string | undefined {
  if (args.length > 100_000) return undefined
  try {
    const parsed: unknown = JSON.parse(args)
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const value = (parsed as Record<string, unknown>)[key]
      if (typeof value === 'string' && value.length > 0 && value.length <= 4096) return value
    }
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error
    // Arguments the model sent that are not JSON: the tool refused them, nothing was read.
  }
  return undefined
}

/** Reads the working state of `session`: the files from `files` (a {@link fileActivityProjection}), the rest from `sources`. */
export function readWorkingState(
  session: Session,
  files: Projection<FileState>,
  sources: WorkingStateSources = {},
): WorkingState {
  const fileState = session.project(files)
  const state: { -readonly [K in keyof WorkingState]: WorkingState[K] } = {
    filesRead: fileState.read,
    filesModified: fileState.modified,
  }
  if (sources.todos) state.todos = sources.todos()
  if (sources.policy) {
    const { approvalPolicy, sandboxMode } = sources.policy()
    state.approvalPolicy = approvalPolicy
    state.sandboxMode = sandboxMode
  }
  return state
}

/** How many paths of each list are shown (the most recent ones). */
const MAX_FILES_SHOWN = 40

/**
 * The working state as plain text for the summary request and the replacing message:
 * the todo list as the user sees it (when the todo plugin runs), the approval policy and
 * sandbox mode (when the approval plugin runs), and the files read and modified (most
 * recent last).
 */
export function renderWorkingState(state: WorkingState): string {
  const lines = state.todos === undefined ? [] : [state.todos]
  if (state.approvalPolicy !== undefined) lines.push(`Approval policy: ${state.approvalPolicy}`)
  if (state.sandboxMode !== undefined) lines.push(`Sandbox mode: ${state.sandboxMode}`)
  lines.push(renderFiles('Files read', state.filesRead), renderFiles('Files modified', state.filesModified))
  return lines.join('\n')
}

function renderFiles(title: string, paths: readonly string[]): string {
  if (paths.length === 0) return `${title}: none`
  const shown = paths.slice(-MAX_FILES_SHOWN)
  const more = paths.length - shown.length
  return `${title} (${paths.length}${more > 0 ? `, the ${shown.length} most recent shown` : ''}):\n${shown.map((p) => `  - ${p}`).join('\n')}`
}
