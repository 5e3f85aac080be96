import type { AgentComposition, Session, SessionHeaderInit } from '@keel/session'
import type { Agent } from './agent.js'
import type { AgentObserver } from './observer.js'
import type { AgentLogger, StoreHandle } from './options.js'
import type { ApprovalAnswerer } from './permission.js'

/**
 * How a plugin that delegates work (`@keel/subagents`) makes child sessions and child
 * agents: the embedding program lends it to the agent (`AgentOptions.sessions`;
 * `createPresetAgent` and the `keel` command do), and plugins read it as
 * `PluginContext.sessions` (undefined when the embedder gave none).
 *
 * Durability is the store's, not this facility's: a child session is an ordinary session
 * of the same store, with its own log and writer lock. It is durable, resumable and
 * forkable on its own, and an agent built here over a session is built exactly as the
 * embedder would rebuild it on resume — from the composition the session's header (or a
 * later `agent-preset/selected`) records, so a child resumed by hand gets the same
 * plugins, tools (`toolFilter`) and model.
 */
export interface ChildSessions {
  /**
   * The composition the agent itself was built from (a child inherits and narrows it);
   * undefined when the embedder built the agent without one.
   */
  readonly composition: AgentComposition | undefined
  /** The model the agent runs with, when the embedder chose one (a child that inherits runs it). */
  readonly model: string | undefined
  /**
   * Creates a session in the agent's store, open for writing, with these header fields
   * (the working directory defaults to the agent's). Throws the store's typed errors.
   */
  create(header: SessionHeaderInit): Promise<StoreHandle>
  /** Reads a stored session without locking or writing it (`SESSION_NOT_FOUND` when absent). */
  load(id: string): Promise<Session>
  /**
   * Builds an agent over `handle` from the composition its session records (its header's
   * `agentComposition`, `toolFilter` included). The agent owns the handle from then on
   * (closing the agent closes it); when building fails, the handle stays the caller's.
   * The child gets this facility too, so it may delegate in turn.
   */
  agent(handle: StoreHandle, options?: ChildAgentOptions): Promise<Agent>
}

/** What the delegating plugin decides about a child agent besides its recorded composition. */
export interface ChildAgentOptions {
  /** The system prompt of the blank child session (the agent definition's body). */
  readonly systemPrompt?: string
  /** The child's interactive answerers (one that puts the child's questions to the parent). */
  readonly answerers?: readonly ApprovalAnswerer[]
  /** Live callbacks (the parent shows a child's progress through them). */
  readonly observers?: readonly AgentObserver[]
  /** Steps per turn before the child's turn ends `max-steps`. */
  readonly maxSteps?: number
  /** Where the child's own unreported failures go. */
  readonly logger?: AgentLogger
}
