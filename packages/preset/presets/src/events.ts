import { type AgentComposition, registerEvents } from '@keel/session'
import { z } from 'zod'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The session switched to another preset while it was still blank (no turn had run).
     * Carries the whole resolved composition, so resume and fork rebuild it without the
     * preset's definition; the latest one wins over the header's `agentComposition`.
     * Log-only (not on the surface).
     */
    'agent-preset/selected': { preset: string; composition: AgentComposition }
  }
}

/** Runtime schema of {@link AgentComposition} (mirrors the type in `@keel/session`). */
export const agentCompositionSchema = z.strictObject({
  preset: z.string(),
  plugins: z.array(
    z.strictObject({
      name: z.string(),
      version: z.string(),
      config: z.unknown().optional(),
      configDigest: z.string(),
    }),
  ),
  tools: z.array(z.string()),
  model: z.string().optional(),
})

registerEvents('@keel/presets', {
  'agent-preset/selected': z.strictObject({ preset: z.string(), composition: agentCompositionSchema }),
})
