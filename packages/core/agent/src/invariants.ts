import { inboxInvariant } from './inbox.js'

/**
 * The invariant fold of @keel/agent's events (registered by the generated
 * `events.generated.ts`): every `agent/inbox/spliced` is a normalized edit of the pending
 * list folded so far, so a log holding an impossible splice is refused at load.
 */
export const invariant = inboxInvariant
