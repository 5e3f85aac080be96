import { errorMessage, isKeelError } from '@keel/base'
import { Session, type SessionCheckpoint, type SessionOptions } from '@keel/session'
import type { ReadOptions, StoredLog } from './backend.js'
import { IntegrityBroken } from './integrity.js'
import type { SessionVerification, StoreNotice } from './store.js'
import { headerInit, toStoreError } from './validate.js'

/** A session built from a stored log, the log it was built from, and what was noticed. */
export interface LoadedSession {
  readonly session: Session
  readonly log: StoredLog
  readonly notices: StoreNotice[]
}

/** The log read again another way (after a checkpoint or integrity record did not hold). */
export type Reread = (options: ReadOptions) => Promise<StoredLog>

/** Builds the session `log` holds: resumed from its checkpoint, or replayed. */
function build(id: string, log: StoredLog, options: SessionOptions): Session {
  const seeded: SessionOptions = { ...options, parsedSeed: true }
  if (log.trusted) seeded.trusted = log.trusted
  const checkpoint = log.checkpoint
  if (checkpoint) {
    return Session.resume(id, headerInit(log.header), checkpoint.doc.state, log.events, {
      ...seeded,
      prefix: checkpoint.prefix,
    })
  }
  return Session.create(id, headerInit(log.header), log.events, seeded)
}

/**
 * Builds a session from `first` (read with its checkpoint and trust when the store uses
 * them). The log always wins: a checkpoint this build cannot use is ignored with a notice
 * and the log replayed; a load that vouched for lines and failed (an integrity record that
 * does not hold, or any other failure) is repeated with every line validated, so a damaged
 * log gives the error a full validation gives, at its line.
 */
export async function loadSession(
  id: string,
  first: StoredLog,
  reread: Reread,
  options: SessionOptions = {},
): Promise<LoadedSession> {
  const notices: StoreNotice[] = []
  let log = first
  for (;;) {
    try {
      const session = build(id, log, options)
      return { session, log, notices: [...log.notices, ...notices] }
    } catch (error) {
      if (log.checkpoint) {
        const reason = isKeelError(error, 'CHECKPOINT_MISMATCH')
          ? String(error.details.reason)
          : `resuming from it failed (${errorMessage(error)})`
        notices.push(checkpointIgnored(id, log.checkpoint.doc.seq, reason))
        log = await reread({ checkpoint: false, trust: log.trusted !== undefined })
        continue
      }
      if (log.trusted) {
        notices.push(
          error instanceof IntegrityBroken
            ? {
                code: 'INTEGRITY_BROKEN',
                message: `${error.message}; every line was validated in full instead`,
              }
            : {
                code: 'TRUSTED_LOAD_FAILED',
                message: `session ${id}: loading the lines this store vouched for failed (${errorMessage(error)}); every line was validated in full instead`,
              },
        )
        log = await reread({ checkpoint: false, trust: false })
        continue
      }
      throw toStoreError(error, id, log)
    }
  }
}

/** The notice of a checkpoint that was not used. */
export function checkpointIgnored(id: string, seq: number | undefined, reason: string): StoreNotice {
  return {
    code: 'CHECKPOINT_IGNORED',
    message: `session ${id}: its checkpoint${seq === undefined ? '' : ` at seq ${seq}`} was not used: ${reason}; the whole log was replayed instead`,
  }
}

/** The first places two checkpoints of the same log differ, in words. */
export function compareStates(full: SessionCheckpoint, resumed: SessionCheckpoint): string[] {
  const differences: string[] = []
  const keys = new Set([...Object.keys(full), ...Object.keys(resumed)]) as Set<keyof SessionCheckpoint>
  for (const key of keys) {
    const a = full[key]
    const b = resumed[key]
    if (key === 'projections' || key === 'invariants') {
      const x = a as Record<string, unknown>
      const y = b as Record<string, unknown>
      // A state only one side holds is of a projection the replay never computed (not registered).
      for (const name of Object.keys(x)) {
        if (name in y && JSON.stringify(x[name]) !== JSON.stringify(y[name])) {
          differences.push(`${key === 'projections' ? 'projection' : 'the invariant of'} ${name}`)
        }
      }
    } else if (JSON.stringify(a) !== JSON.stringify(b)) differences.push(key)
  }
  return differences
}

/**
 * `SessionStore.verify`: a full replay with every check against the state resumed from the
 * latest checkpoint (read with trust, so every integrity record's CRC is checked too).
 */
export async function verifySession(id: string, read: Reread): Promise<SessionVerification> {
  const full = await loadSession(id, await read({ checkpoint: false, trust: false }), read)
  const session = full.session
  const report: SessionVerification = {
    id: session.id,
    events: session.nextSeq,
    differences: [],
    notices: full.notices,
  }
  const covered = await read({ checkpoint: false, trust: true })
  try {
    for (const _ of covered.events) {
      // reading to the end checks every integrity record's CRC
    }
    const start = covered.integrity?.()
    if (start) report.coveredTo = start.from
  } catch (error) {
    if (!(error instanceof IntegrityBroken)) throw error
    report.differences.push(error.message)
  }
  const withCheckpoint = await read({ checkpoint: true, trust: false })
  const doc = withCheckpoint.checkpoint?.doc
  const ignored = withCheckpoint.notices.find((n) => n.code === 'CHECKPOINT_IGNORED')
  if (!doc) {
    if (ignored) report.checkpoint = { seq: -1, usable: false, reason: ignored.message }
    return report
  }
  let resumed: Session
  try {
    resumed = build(id, withCheckpoint, {})
  } catch (error) {
    report.checkpoint = {
      seq: doc.seq,
      usable: false,
      reason: errorMessage(error),
    }
    return report
  }
  report.checkpoint = { seq: doc.seq, usable: true }
  report.differences.push(...compareStates(session.checkpoint(), resumed.checkpoint()))
  return report
}
