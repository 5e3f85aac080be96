// The event @keel/permission-presets owns. Declared once, here: `pnpm gen-persistence-catalog`
// generates its validator into events.generated.ts (registered on import) and the catalog entry.
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The person picked a permission preset (`/permissions <name>`, `keel --permissions
     * <name>`): a named bundle of approval policy and sandbox mode. The `approval/policy`
     * and `sandbox/mode` events it implies follow at once and are what governs tool calls;
     * this event is the person's intent, so a UI shows the preset's name while the policy in
     * force still matches its bundle (and the two knobs otherwise). Log-only, appended
     * `ignorable` (the knob events carry the effect); the latest wins.
     * @example {"preset":"auto-edit"}
     */
    'permission/preset': {
      /** @pattern ^[a-z][a-z0-9-]{0,39}$ */
      preset: string
    }
  }
}
