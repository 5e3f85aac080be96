import type { AgentComposition } from '@keel/session'
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The session switched to another preset while it was still blank (no turn had run).
     * Carries the whole resolved composition, so resume and fork rebuild it without the
     * preset's definition; the latest one wins over the header's `agentComposition`.
     * Log-only (not on the surface).
     * @example {"preset":"coding","composition":{"preset":"coding","plugins":[{"name":"@keel/todo","version":"0.1.0","configDigest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}],"tools":["fs","shell"],"model":"deepseek-chat"}}
     */
    'agent-preset/selected': {
      /** @minLength 1 */
      preset: string
      composition: AgentComposition
    }
  }
}
