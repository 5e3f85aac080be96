import type { ServiceKey, ServiceMap, ServiceView } from '@keel/tools'
import { AgentError } from './errors.js'

/** What one plugin says about services in its definition. */
export interface ServiceNeeds {
  readonly name: string
  readonly provides?: readonly ServiceKey[]
  readonly requires?: readonly ServiceKey[]
  readonly optional?: readonly ServiceKey[]
}

/** A service key is `<owner>.<noun>`: lower-case segments of letters, digits and `-`, dot-separated. */
const serviceKeyPattern = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/

/**
 * The setup order of `plugins`: every provider before the plugins that require or
 * optionally use its services, the given order otherwise (among the plugins whose
 * providers are set up, the earliest listed goes first). Pure; throws {@link AgentError},
 * before any plugin is set up, for a malformed key (`PLUGIN_SERVICE_INVALID`), a key two
 * plugins provide (`PLUGIN_SERVICE_DUPLICATE`, naming both), a required key nobody
 * provides (`PLUGIN_SERVICE_MISSING`, naming the plugin and the key) and a cycle
 * (`PLUGIN_SERVICE_CYCLE`, naming the plugins around it).
 */
export function orderByServices(plugins: readonly ServiceNeeds[]): number[] {
  const providers = new Map<string, number>()
  plugins.forEach((plugin, index) => {
    for (const key of [...(plugin.provides ?? []), ...(plugin.requires ?? []), ...(plugin.optional ?? [])]) {
      if (!serviceKeyPattern.test(key)) {
        throw new AgentError(
          'PLUGIN_SERVICE_INVALID',
          `plugin '${plugin.name}' names service ${JSON.stringify(key)}: a service key is '<owner>.<noun>' (lower-case, e.g. 'todo.list')`,
          { plugin: plugin.name, key },
        )
      }
    }
    for (const key of plugin.provides ?? []) {
      const other = providers.get(key)
      if (other !== undefined) {
        throw new AgentError(
          'PLUGIN_SERVICE_DUPLICATE',
          `plugins '${plugins[other]!.name}' and '${plugin.name}' both provide service '${key}'; an agent has one provider per service`,
          { plugin: plugin.name, other: plugins[other]!.name, key },
        )
      }
      providers.set(key, index)
    }
  })
  const after: Array<Set<number>> = plugins.map(() => new Set())
  plugins.forEach((plugin, index) => {
    for (const key of plugin.requires ?? []) {
      const provider = providers.get(key)
      if (provider === undefined) {
        throw new AgentError(
          'PLUGIN_SERVICE_MISSING',
          `plugin '${plugin.name}' requires service '${key}', which no plugin of this agent provides; add the plugin that provides '${key}'`,
          { plugin: plugin.name, key },
        )
      }
      if (provider !== index) after[index]!.add(provider)
    }
    for (const key of plugin.optional ?? []) {
      const provider = providers.get(key)
      if (provider !== undefined && provider !== index) after[index]!.add(provider)
    }
  })
  const order: number[] = []
  const placed = new Set<number>()
  while (order.length < plugins.length) {
    const next = plugins.findIndex((_, i) => !placed.has(i) && [...after[i]!].every((p) => placed.has(p)))
    if (next < 0) throw cycleError(plugins, after, placed)
    order.push(next)
    placed.add(next)
  }
  return order
}

function cycleError(
  plugins: readonly ServiceNeeds[],
  after: ReadonlyArray<ReadonlySet<number>>,
  placed: ReadonlySet<number>,
): AgentError {
  // Walk waiting plugins until one repeats: that stretch of the walk is a cycle.
  const walk: number[] = []
  let current = plugins.findIndex((_, i) => !placed.has(i))
  while (!walk.includes(current)) {
    walk.push(current)
    current = [...after[current]!].find((p) => !placed.has(p))!
  }
  const cycle = [...walk.slice(walk.indexOf(current)), current].map((i) => `'${plugins[i]!.name}'`)
  return new AgentError(
    'PLUGIN_SERVICE_CYCLE',
    `the plugins' services form a cycle (${cycle.join(' needs ')}), so no setup order works; break it by making one use optional or moving the service`,
    { plugins: walk.map((i) => plugins[i]!.name) },
  )
}

/** The services of one agent: each key provided once, by the plugin that declared it. */
export class ServiceRegistry implements ServiceView {
  readonly #services = new Map<ServiceKey, { readonly plugin: string; readonly service: unknown }>()

  /** Records `plugin`'s service under `key` (the host checked that `plugin` declared it). */
  provide<K extends ServiceKey>(plugin: string, key: K, service: ServiceMap[K]): void {
    const taken = this.#services.get(key)
    if (taken) {
      throw new AgentError('PLUGIN_SERVICE_DUPLICATE', `plugin '${plugin}' provided service '${key}' twice`, {
        plugin,
        other: taken.plugin,
        key,
      })
    }
    this.#services.set(key, { plugin, service })
  }

  get<K extends ServiceKey>(key: K): ServiceMap[K] | undefined {
    return this.#services.get(key)?.service as ServiceMap[K] | undefined
  }

  has(key: ServiceKey): boolean {
    return this.#services.has(key)
  }

  keys(): readonly ServiceKey[] {
    return [...this.#services.keys()]
  }

  /** The plugin that provides `key`. */
  providerOf(key: ServiceKey): string | undefined {
    return this.#services.get(key)?.plugin
  }

  /** Forgets every service (the agent closed). */
  clear(): void {
    this.#services.clear()
  }
}
