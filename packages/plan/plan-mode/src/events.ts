// The event @keel/plan-mode owns. Declared once, here: `pnpm gen-persistence-catalog` generates
// its validator into events.generated.ts (registered on import) and the catalog entry.
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * Whether plan mode is in force from this point on: while it is, only tools annotated
     * read-only run (the others are refused with `PLAN_MODE_READ_ONLY`). Appended when the
     * person enters or leaves it (`/plan`, `keel --plan`) and when the person approves the
     * plan the model proposed (`exit_plan_mode`). Whole-value replace: the latest wins; a
     * log with none is not in plan mode. Log-only; a resumed or forked session keeps it.
     * @example {"active":true}
     */
    'plan/mode': { active: boolean }
  }
}
