import type { SessionTitleSource } from './events.js'

/** `session.title`: the session's title, and a person's way to set it. */
export interface SessionTitleService {
  /** The title in force (a person's wins), or undefined before any. */
  current(): { readonly title: string; readonly source: SessionTitleSource } | undefined
  /** Sets a person's title (one line, trimmed, at most 200 characters); returns it, or undefined for an empty text (nothing appended). */
  set(text: string): string | undefined
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The session title (from @keel/session-title): read it, set a person's. */
    'session.title': SessionTitleService
  }
}
