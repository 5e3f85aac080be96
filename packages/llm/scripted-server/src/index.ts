export { CACHE_BLOCK_TOKENS, PromptCache, promptTokensOf } from './prompt.js'
export {
  type ResponseIdentity,
  splitString,
  streamChunks,
  type WireChunk,
  type WireUsage,
} from './protocol.js'
export {
  parseScriptedResponse,
  type ScriptedFault,
  type ScriptedFinishReason,
  type ScriptedResponse,
  type ScriptedToolCall,
  type ScriptedUsage,
  type ScriptIssue,
  ScriptValidationError,
  type Split,
  scriptedResponseSchema,
} from './script.js'
export {
  type RecordedChatBody,
  type RecordedMessage,
  type RecordedRequest,
  type RequestOutcome,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptHandler,
  startScriptedServer,
} from './server.js'
