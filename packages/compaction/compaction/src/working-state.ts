import type { Projection, Session, SessionEvent } from '@keel/session'
import { renderTodoList, type TodoItem, todoProjection } from '@keel/todo'

/**
 * The event types of the approval plugin (`@keel/user-approval`) read by name, so this
 * package does not depend on it: the latest event of each type holds the active value.
 */
export const APPROVAL_POLICY_EVENT = 'approval/policy'
export const SANDBOX_MODE_EVENT = 'sandbox/mode'

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

/** What the model was working with, rebuilt from the log (never from a summary). */
export interface WorkingState {
  readonly todos: readonly TodoItem[]
  /** The `data` of the latest `approval/policy` event, when there is one. */
  readonly approvalPolicy?: unknown
  /** The `data` of the latest `sandbox/mode` event, when there is one. */
  readonly sandboxMode?: unknown
  /** Paths read by a successful read tool call, oldest first, each once. */
  readonly filesRead: readonly string[]
  /** Paths written or edited by a successful call, oldest first, each once. */
  readonly filesModified: readonly string[]
}

interface FileState {
  readonly pending: ReadonlyMap<string, { kind: 'read' | 'modify'; path: string }>
  readonly read: readonly string[]
  readonly modified: readonly string[]
}

const withPath = (list: readonly string[], path: string): readonly string[] =>
  list.at(-1) === path ? list : [...list.filter((p) => p !== path), path]

/** Folds the files read and modified from `tool/call` and `tool/result` events of `tools`. */
export function fileActivityProjection(tools: FileToolNames): Projection<FileState> {
  return {
    name: '@keel/compaction/files',
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

interface LatestByType {
  readonly approvalPolicy?: unknown
  readonly sandboxMode?: unknown
}

/** The latest `approval/policy` and `sandbox/mode` payloads, read by type name. */
export const approvalStateProjection: Projection<LatestByType> = {
  name: '@keel/compaction/approval-state',
  init: () => ({}),
  apply(state, event) {
    const type: string = event.type
    if (type === APPROVAL_POLICY_EVENT) return { ...state, approvalPolicy: event.data }
    if (type === SANDBOX_MODE_EVENT) return { ...state, sandboxMode: event.data }
    return state
  },
}

const fileProjections = new WeakMap<FileToolNames, Projection<FileState>>()

/** Reads the working state of `session` from its projections. */
export function readWorkingState(session: Session, tools: FileToolNames = defaultFileTools): WorkingState {
  let files = fileProjections.get(tools)
  if (!files) {
    files = fileActivityProjection(tools)
    fileProjections.set(tools, files)
  }
  const fileState = session.project(files)
  const approval = session.project(approvalStateProjection)
  const state: { -readonly [K in keyof WorkingState]: WorkingState[K] } = {
    todos: session.project(todoProjection),
    filesRead: fileState.read,
    filesModified: fileState.modified,
  }
  if (approval.approvalPolicy !== undefined) state.approvalPolicy = approval.approvalPolicy
  if (approval.sandboxMode !== undefined) state.sandboxMode = approval.sandboxMode
  return state
}

/** How many paths of each list are shown (the most recent ones). */
const MAX_FILES_SHOWN = 40

/**
 * The working state as plain text for the summary request and the replacing message:
 * the todo list as the user sees it, the approval policy and sandbox mode when the
 * approval plugin recorded them, and the files read and modified (most recent last).
 */
export function renderWorkingState(state: WorkingState): string {
  const lines = [renderTodoList(state.todos)]
  if (state.approvalPolicy !== undefined) lines.push(`Approval policy: ${renderValue(state.approvalPolicy)}`)
  if (state.sandboxMode !== undefined) lines.push(`Sandbox mode: ${renderValue(state.sandboxMode)}`)
  lines.push(renderFiles('Files read', state.filesRead), renderFiles('Files modified', state.filesModified))
  return lines.join('\n')
}

function renderFiles(title: string, paths: readonly string[]): string {
  if (paths.length === 0) return `${title}: none`
  const shown = paths.slice(-MAX_FILES_SHOWN)
  const more = paths.length - shown.length
  return `${title} (${paths.length}${more > 0 ? `, the ${shown.length} most recent shown` : ''}):\n${shown.map((p) => `  - ${p}`).join('\n')}`
}

/** A payload of another plugin, shown compactly: a lone string field as itself, else bounded JSON. */
function renderValue(data: unknown): string {
  if (typeof data === 'string') return data
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    const values = Object.values(data)
    if (values.length === 1 && typeof values[0] === 'string') return values[0]
  }
  const json = JSON.stringify(data)
  return json.length > 500 ? `${json.slice(0, 500)}…` : json
}
