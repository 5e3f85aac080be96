import './events.js'
import './services.js'

export { ownedEventTypes as sessionTitleEventTypes } from './events.generated.js'
export type { SessionTitleSource, TitleRequest, TitleRequestOutcome } from './events.js'
export {
  type SessionTitleConfig,
  sessionTitleConfigSchema,
  sessionTitlePlugin,
  TITLE_HOLD_MS,
} from './plugin.js'
export type { SessionTitleService } from './services.js'
export {
  cleanTitle,
  foldTitle,
  MAX_TITLE_CHARS,
  sessionTitleProjection,
  TITLE_INSTRUCTION,
  type TitleState,
  titleMessages,
  titleOfEvents,
  userTitle,
} from './title.js'
