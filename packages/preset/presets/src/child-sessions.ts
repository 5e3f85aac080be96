import type { Agent, ChildSessions } from '@keel/agent'
import type { AgentComposition } from '@keel/session'
import type { SessionStore } from '@keel/store'
import type { PresetAgent, PresetAgentOptions } from './agent.js'

/** The options of the parent that its children share (the model connection, retries, limits). */
type Shared = Pick<
  PresetAgentOptions,
  | 'llm'
  | 'cwd'
  | 'catalog'
  | 'clock'
  | 'random'
  | 'retry'
  | 'maxTokens'
  | 'maxParallelTools'
  | 'maxResultChars'
>

/**
 * The `sessions` facility of an agent built from a preset over `store`: children are
 * sessions of the same store, and a child's agent is built by `build` (`createPresetAgent`)
 * from the composition its header records — the very path `keel resume <child>` takes — so
 * the child's log is durable, resumable and forkable on its own. What the parent ran with
 * but did not record (`extraTools`, observers, answerers) does not pass to children.
 */
export function presetChildSessions(
  init: {
    store: SessionStore
    shared: Shared
    composition: AgentComposition
    model: string | undefined
  },
  build: (options: PresetAgentOptions) => Promise<PresetAgent>,
): ChildSessions {
  const { store, shared } = init
  return {
    composition: init.composition,
    model: init.model,
    create: (header) => store.create({ header: { cwd: shared.cwd, ...header } }),
    load: (id) => store.load(id),
    async agent(handle, options = {}): Promise<Agent> {
      const built = await build({
        ...definedOf(shared),
        cwd: handle.session.header.cwd ?? shared.cwd,
        store,
        session: handle,
        answerers: options.answerers ?? [],
        ...(options.observers === undefined ? {} : { observers: options.observers }),
        ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
        ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      })
      return built.agent
    },
  }
}

/** `shared` without its undefined members (exact optional properties). */
function definedOf(shared: Shared): Shared {
  return Object.fromEntries(Object.entries(shared).filter(([, value]) => value !== undefined)) as Shared
}
