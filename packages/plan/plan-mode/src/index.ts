import './events.js'
import './services.js'

export { ownedEventTypes as planModeEventTypes } from './events.generated.js'
export {
  EXIT_PLAN_TOOL,
  MAX_PLAN_SHOWN,
  PLAN_MODE_OFF,
  PLAN_MODE_ON,
  type PlanCall,
  planDigest,
  planForDisplay,
  planModeProjection,
  planModeVote,
} from './mode.js'
export { PLAN_MODE_SOURCE, type PlanModeConfig, planModeConfigSchema, planModePlugin } from './plugin.js'
export type { PlanModeService } from './services.js'
