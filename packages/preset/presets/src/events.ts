import type { AgentComposition } from '@keel/session'
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The session switched to another preset while it was still blank (no turn had run).
     * Carries the whole resolved composition, so resume and fork rebuild it without the
     * preset's definition; the latest one wins over the header's `agentComposition`.
     * Log-only (not on the surface).
     */
    'agent-preset/selected': {
      /** @minLength 1 */
      preset: string
      composition: AgentComposition
    }
  }
}
