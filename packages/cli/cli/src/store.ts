import { parseArgs } from 'node:util'
import { KeelError } from '@keel/base'
import type { SessionStore } from '@keel/store'
import { JsonlStore, keelHome } from '@keel/store-jsonl'
import { PostgresStore } from '@keel/store-postgres'

/** The storage backends the command line can select. */
export type StoreKind = 'jsonl' | 'postgres'

/** A `--store` (or `KEEL_STORE`) value that names no backend. */
export class StoreKindInvalid extends KeelError<'STORE_KIND_INVALID'> {}

/** A store chosen on the command line, with what the CLI needs to say where things went. */
export interface SelectedStore {
  readonly kind: StoreKind
  readonly store: SessionStore
  /** Where sessions live, for people (`/home/me/.keel`, `PostgreSQL schema keel`). */
  readonly where: string
  /** Where one session's log is, for people. */
  logOf(id: string): string
}

/**
 * Resolves the store: `--store` wins, then `$KEEL_STORE`, then the embedded JSONL default.
 * `postgres` connects with `$KEEL_PG_URL` (a missing URL is the store's typed error).
 */
export function selectStore(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  home?: string,
): SelectedStore {
  const kind = flag ?? (env.KEEL_STORE && env.KEEL_STORE !== '' ? env.KEEL_STORE : 'jsonl')
  if (kind === 'jsonl') {
    const root = home ?? keelHome(env as NodeJS.ProcessEnv)
    const store = new JsonlStore({ home: root })
    return {
      kind,
      store,
      where: root,
      logOf: (id) => store.fileOf(id),
    }
  }
  if (kind === 'postgres') {
    const url = env.KEEL_PG_URL
    const store = new PostgresStore(url ? { url } : {})
    return {
      kind,
      store,
      where: 'PostgreSQL ($KEEL_PG_URL), schema keel',
      logOf: (id) => `PostgreSQL table keel.events, session_id = '${id}'`,
    }
  }
  throw new StoreKindInvalid(
    'STORE_KIND_INVALID',
    `unknown store ${JSON.stringify(kind)} (from ${flag !== undefined ? '--store' : '$KEEL_STORE'}): use jsonl (the default) or postgres`,
    { kind },
  )
}

/**
 * `keel sessions unlock <id>`: removes a JSONL session's writer lock that this host cannot
 * judge (held on another host) or that is stale or unreadable. A lock of a live process on
 * this host is refused (`SESSION_LOCKED`): close the session there instead.
 */
export async function unlockSession(
  argv: readonly string[],
  io: { env: Readonly<Record<string, string | undefined>>; out(text: string): void; err(text: string): void },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { store: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
  const id = positionals[0]
  if (id === undefined || positionals.length > 1) {
    io.err('usage: keel sessions unlock <id>\n')
    return 2
  }
  const selected = selectStore(values.store, io.env)
  try {
    if (!(selected.store instanceof JsonlStore)) {
      io.err(
        `keel sessions unlock: the ${selected.kind} store keeps no writer lock files; nothing to unlock\n`,
      )
      return 2
    }
    const result = await selected.store.unlock(id)
    if (!result.removed) {
      io.out(`session ${id} has no writer lock; nothing to do\n`)
      return 0
    }
    const holder = result.holder
    const who =
      holder === 'unreadable'
        ? 'an unreadable lock'
        : `the lock of process ${holder.pid} on ${holder.host}${holder.since ? ` (taken ${new Date(holder.since).toISOString()})` : ''}`
    io.out(`session ${id}: removed ${who}; it can be opened again\n`)
    return 0
  } finally {
    await selected.store.close()
  }
}
