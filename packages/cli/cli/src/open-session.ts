import { stat } from 'node:fs/promises'
import type { Session } from '@keel/session'
import type { SessionHandle, StoreNotice } from '@keel/store'
import { withSessionId } from './session-id.js'
import type { SelectedStore } from './store.js'
import { UsageError } from './usage.js'

/** Refuses a `--cwd` (or a recorded directory) that does not exist or is not a directory. */
export async function checkDirectory(dir: string, what: string): Promise<void> {
  const found = await stat(dir).catch(() => undefined)
  if (!found) throw new UsageError(`${what} ${dir} does not exist`)
  if (!found.isDirectory()) throw new UsageError(`${what} ${dir} is not a directory`)
}

/** The session `keel resume` or `keel fork` continues, and where it runs. */
export interface ExistingSession {
  readonly handle: SessionHandle
  /** The directory the agent works in. */
  readonly cwd: string
  /** Lines worth telling the user (resumed, forked, the directory, store notices). */
  readonly notes: string[]
}

/** What to open: a session by id, or the last active one of a directory. */
export type SessionChoice =
  | { kind: 'resume'; id: string }
  | { kind: 'last'; dir: string }
  | { kind: 'fork'; id: string; atSeq?: number }

/**
 * Opens the session a command names and decides where it runs: in the directory the
 * session recorded (said when that is not where `keel` was started), or in an explicit
 * `--cwd`. A recorded directory that is gone is refused, naming `--cwd`; the handle is
 * closed again. `--last` is the session with the latest activity in the directory.
 */
export async function openExisting(
  choice: SessionChoice,
  selected: SelectedStore,
  where: {
    invocation: string
    explicit?: string
    /** Checks the parent of a fork before anything is written (a fork under another preset). */
    beforeFork?: (parent: Session, cwd: string) => Promise<void>
  },
): Promise<ExistingSession> {
  let typed: string
  const unlisted: StoreNotice[] = []
  if (choice.kind === 'last') {
    const onNotice = (notice: StoreNotice) => unlisted.push(notice)
    const [latest] = await selected.store.list({ cwd: choice.dir, limit: 1, orderBy: 'activity', onNotice })
    if (!latest)
      throw new UsageError(
        `no session has run in ${choice.dir} yet${unlisted.length > 0 ? ` that can be read (${unlisted.length} cannot: keel sessions list names them)` : ''}; keel sessions list shows them all`,
        { showUsage: false },
      )
    typed = latest.id
  } else typed = choice.id
  // the id as typed, or the one session it is the start of
  const { id, handle } = await withSessionId(selected.store, typed, async (id) => {
    if (choice.kind === 'fork' && (where.explicit === undefined || where.beforeFork)) {
      // A fork writes a new session: check the parent (its directory, its events) before, not after.
      const parent = await selected.store.load(id)
      const recorded = parent.header.cwd
      if (where.explicit === undefined && recorded !== undefined) await usableRecorded(id, recorded)
      await where.beforeFork?.(parent, where.explicit ?? recorded ?? where.invocation)
    }
    const handle =
      choice.kind === 'fork'
        ? await selected.store.fork(id, choice.atSeq === undefined ? {} : { atSeq: choice.atSeq })
        : await selected.store.open(id)
    return { id, handle }
  })
  const notes =
    choice.kind === 'fork'
      ? [
          `forked session ${id}${choice.atSeq === undefined ? '' : ` at seq ${choice.atSeq}`} into ${handle.session.id}`,
        ]
      : [`resumed session ${id}`]
  for (const n of [...unlisted, ...handle.notices]) notes.push(`store notice ${n.code}: ${n.message}`)
  const recorded = handle.session.header.cwd
  try {
    if (where.explicit !== undefined) {
      if (recorded !== undefined && recorded !== where.explicit)
        notes.push(`running in ${where.explicit} (--cwd); the session was recorded in ${recorded}`)
      return { handle, cwd: where.explicit, notes }
    }
    if (recorded === undefined) return { handle, cwd: where.invocation, notes }
    await usableRecorded(id, recorded)
    if (recorded !== where.invocation) notes.push(`running in ${recorded}, where the session was recorded`)
    return { handle, cwd: recorded, notes }
  } catch (error) {
    await handle.close()
    throw error
  }
}

async function usableRecorded(id: string, recorded: string): Promise<void> {
  const found = await stat(recorded).catch(() => undefined)
  if (found?.isDirectory()) return
  throw new UsageError(
    `session ${id} ran in ${recorded}, which ${found ? 'is not a directory' : 'no longer exists'}; to continue it elsewhere, pass --cwd <dir>`,
    { showUsage: false },
  )
}
