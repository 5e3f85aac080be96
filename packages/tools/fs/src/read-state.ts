import type { Stats } from 'node:fs'
import { resolve } from 'node:path'
import type { JsonValue } from '@keel/base'
import { type Projection, registerProjection } from '@keel/session'
import type { ToolContext } from '@keel/tools'
import { FsToolError } from './common.js'

/** The tools whose successful result means the model knows a file's content. */
const READERS = new Set(['read_file'])
const WRITERS = new Set(['write_file', 'edit_file'])

interface PendingCall {
  name: string
  path: string
  callTime: number
}

/** One successful read or write: the model knew the file's content as of `time`. */
interface Knowledge {
  readonly path: string
  readonly time: number
}

/**
 * Per `tool/result` seq still on the surface, what it taught the model; and per path (as
 * the model wrote it) the seq of the latest result that left the surface.
 */
export interface ReadState {
  pending: Map<string, PendingCall>
  known: Map<number, Knowledge>
  forgotten: Map<string, number>
}

function pathArgument(args: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(args)
    const path = (parsed as { path?: unknown } | null)?.path
    return typeof path === 'string' && path !== '' ? path : undefined
  } catch {
    return undefined // malformed arguments never ran, so they taught the model nothing
  }
}

/**
 * What the model has read, folded from the log (no state of its own, so resume and fork
 * see the same): a successful `read_file` result means the model knew the file as it was
 * when the call was logged (the read happened after); a successful `write_file`/`edit_file`
 * result means it knew the content it wrote, as of when the result was logged. That
 * knowledge lives as long as the result is on the surface: when a surface replace shadows
 * it (a compaction pruned or summarized it), the model no longer sees the content, and the
 * file must be read again before it is changed. Keyed by the path as written;
 * {@link lastKnown} resolves it against the working directory.
 */
export const readStateProjection: Projection<ReadState> = registerProjection<ReadState>({
  name: 'fs/read-state',
  init: () => ({ pending: new Map(), known: new Map(), forgotten: new Map() }),
  apply(state, event) {
    if (event.type === 'tool/call') {
      const { name, callId, arguments: args } = event.data
      if (!READERS.has(name) && !WRITERS.has(name)) return state
      const path = pathArgument(args)
      if (path !== undefined) state.pending.set(callId, { name, path, callTime: event.time })
    } else if (event.type === 'tool/result') {
      const id = event.data.message.toolCallId
      const call = state.pending.get(id)
      if (call !== undefined) {
        state.pending.delete(id)
        if (event.data.message.isError !== true) {
          const time = READERS.has(call.name) ? call.callTime : event.time
          state.known.set(event.seq, { path: call.path, time })
        }
      }
    }
    if ('surfaceOp' in event && typeof event.surfaceOp === 'object' && event.surfaceOp !== null) {
      for (const seq of event.sourceEventSeqs ?? []) {
        const knowledge = state.known.get(seq)
        if (knowledge === undefined) continue
        state.known.delete(seq)
        state.forgotten.set(knowledge.path, seq)
      }
    }
    return state
  },
  checkpoint: {
    version: 1,
    save: (state) =>
      ({
        pending: [...state.pending],
        known: [...state.known],
        forgotten: [...state.forgotten],
      }) as unknown as JsonValue,
    restore: (saved) => {
      const s = saved as unknown as {
        pending: [string, PendingCall][]
        known: [number, Knowledge][]
        forgotten: [string, number][]
      }
      return { pending: new Map(s.pending), known: new Map(s.known), forgotten: new Map(s.forgotten) }
    },
  },
})

/** The latest time the model knew `absolute` in this session, or undefined when it never read it. */
export function lastKnown(ctx: ToolContext, absolute: string): number | undefined {
  const state = ctx.session.project(readStateProjection)
  let latest: number | undefined
  for (const { path, time } of state.known.values()) {
    if (resolve(ctx.cwd, path) === absolute && (latest === undefined || time > latest)) latest = time
  }
  return latest
}

/** The seq of the latest result about `absolute` that left the surface (a compaction), if any. */
function compactedAway(ctx: ToolContext, absolute: string): number | undefined {
  for (const [path, seq] of ctx.session.project(readStateProjection).forgotten) {
    if (resolve(ctx.cwd, path) === absolute) return seq
  }
  return undefined
}

/**
 * Refuses to change an existing file the model has not read in this session, or whose
 * content it read has since left its context in a compaction (`FILE_NOT_READ`), or that changed on disk after it last read or wrote it
 * (`FILE_CHANGED_SINCE_READ`, judged by the file's modification time against the log's
 * event times, so both come from the same system clock).
 */
export function assertFresh(ctx: ToolContext, raw: string, absolute: string, st: Stats): void {
  const known = lastKnown(ctx, absolute)
  const compacted = known === undefined ? compactedAway(ctx, absolute) : undefined
  if (compacted !== undefined) {
    throw new FsToolError(
      'FILE_NOT_READ',
      `${raw} was read in this session, but that content is no longer in your context (a compaction replaced it; session log seq ${compacted}); read it again with read_file, then retry the change`,
      { path: raw, resolvedPath: absolute, compactedSeq: compacted },
    )
  }
  if (known === undefined) {
    throw new FsToolError(
      'FILE_NOT_READ',
      `${raw} exists but has not been read in this session; read it with read_file first, then retry the change`,
      { path: raw, resolvedPath: absolute },
    )
  }
  // event times are whole milliseconds (Date.now); file times have a fraction of one
  if (Math.floor(st.mtimeMs) > known) {
    throw new FsToolError(
      'FILE_CHANGED_SINCE_READ',
      `${raw} changed on disk since you last read it (modified ${new Date(st.mtimeMs).toISOString()}, read ${new Date(known).toISOString()}); read it again with read_file and redo the change on the current content`,
      { path: raw, resolvedPath: absolute, modifiedAt: st.mtimeMs, knownAt: known },
    )
  }
}
