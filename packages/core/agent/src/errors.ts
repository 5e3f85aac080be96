import { KeelError } from '@keel/base'

/** Every way the plugin host or the agent refuses something. */
export type AgentErrorCode =
  /** A plugin's config failed its zod schema (or a plugin without a schema was given one). */
  | 'PLUGIN_CONFIG_INVALID'
  /** Two plugins in one agent share a name. */
  | 'PLUGIN_NAME_DUPLICATE'
  /** A plugin lists an event type in `events` that no loaded package registered. */
  | 'PLUGIN_EVENTS_UNREGISTERED'
  /** A plugin's `setup` threw; the plugins set up before it were disposed again. */
  | 'PLUGIN_SETUP_FAILED'
  /** One or more disposers threw on close (the others still ran). */
  | 'PLUGIN_DISPOSE_FAILED'
  /** A plugin called a context method after the agent closed or outside setup where that is not allowed. */
  | 'PLUGIN_CONTEXT_CLOSED'
  /** A service key is not `<owner>.<noun>`. */
  | 'PLUGIN_SERVICE_INVALID'
  /** Two plugins of one agent provide the same service (both are named). */
  | 'PLUGIN_SERVICE_DUPLICATE'
  /** A plugin requires a service no plugin of the agent provides (the plugin and the key are named). */
  | 'PLUGIN_SERVICE_MISSING'
  /** The plugins' service needs form a cycle, so no setup order works. */
  | 'PLUGIN_SERVICE_CYCLE'
  /** A plugin provided or used a service key its definition does not declare. */
  | 'PLUGIN_SERVICE_UNDECLARED'
  /** A plugin declared a service in `provides` but its setup did not provide it. */
  | 'PLUGIN_SERVICE_NOT_PROVIDED'
  /** An agent option is out of range (maxSteps, maxParallelTools, retry, …). */
  | 'AGENT_OPTIONS_INVALID'
  /** `send` or `inject` got something that is not a valid user / developer message. */
  | 'AGENT_INPUT_INVALID'
  /** `send` or `inject` after `close()`. */
  | 'AGENT_CLOSED'
  /** `runTool` while a turn runs or is queued. */
  | 'AGENT_BUSY'
  /** A plugin registered a command with a bad or taken name. */
  | 'COMMAND_INVALID'
  /** `runCommand` named a command no plugin registered. */
  | 'COMMAND_UNKNOWN'
  /** A command's `run` threw (the cause is attached). */
  | 'COMMAND_FAILED'
  /** A command was cancelled (its signal fired) before it answered. */
  | 'COMMAND_ABORTED'
  /** `setSystemPrompt` on a session whose history does not open with a system message. */
  | 'SYSTEM_PROMPT_UNCHANGEABLE'
  /** An inbox edit (`agent/inbox/spliced`) outside the pending list, or a `canceled` one that inserts. */
  | 'INBOX_SPLICE_INVALID'
  /** The `model.active` service answered something that is not a model choice (the plugin is named). */
  | 'MODEL_CHOICE_INVALID'

/** A refusal of the plugin host or the agent. `details` names the plugin, tool or option involved. */
export class AgentError extends KeelError<AgentErrorCode> {}
