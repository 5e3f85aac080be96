import { isKeelError } from '@keel/base'
import type { SessionStore } from '@keel/store'
import { UsageError } from './usage.js'

/** The shortest start of an id taken for the whole (as `git` takes an abbreviated hash). */
export const MIN_ID_PREFIX = 4
/** Matching ids an ambiguous prefix names. */
const NAMED = 5

/**
 * Runs `use` with the session `typed` names: the id itself, or — when no session has that
 * id — the one session whose id starts with it (at least {@link MIN_ID_PREFIX} characters).
 * A prefix of several ids is a {@link UsageError} naming them; one of none gives the
 * store's own `SESSION_NOT_FOUND`. Only a not-found of `typed` itself is retried, so an
 * error about another session (a subagent's, a fork's parent) stays what it is.
 */
export async function withSessionId<T>(
  store: SessionStore,
  typed: string,
  use: (id: string) => Promise<T>,
): Promise<T> {
  try {
    return await use(typed)
  } catch (error) {
    if (!isKeelError(error, 'SESSION_NOT_FOUND') || error.details.id !== typed) throw error
    if (typed.length < MIN_ID_PREFIX) throw error
    const ids = (await store.list({ limit: Number.MAX_SAFE_INTEGER }))
      .map((s) => s.id as string)
      .filter((id) => id.startsWith(typed))
      .sort()
    if (ids.length === 0) throw error
    if (ids.length > 1) {
      const named = ids.slice(0, NAMED).join(', ')
      throw new UsageError(
        `session id ${typed} is the start of ${ids.length} sessions (${named}${ids.length > NAMED ? ', …' : ''}); type more of it`,
        { showUsage: false },
      )
    }
    return use(ids[0]!)
  }
}
