import { canonicalDigest, canonicalJson } from '@keel/base'
import type { Message, ToolSpec } from '@keel/llm'
import { type Projection, registerProjection, type Session, type SessionEventMap } from '@keel/session'
import type { ModelRoute } from './model-route.js'

type Header = SessionEventMap['request/header']
type Context = SessionEventMap['request/context']

/** The latest `request/context` and `request/header` of the log (without their turn and step). */
export interface RequestLogState {
  readonly context: string | null
  readonly header: string | null
}

/** What a recorded value is compared by: its canonical JSON without the step it was recorded in. */
function withoutStep(data: Header | Context): string {
  const { turn: _turn, step: _step, ...rest } = data
  return canonicalJson(rest)
}

/** Folds the latest recorded request context and header. */
export const requestLogProjection: Projection<RequestLogState> = registerProjection<RequestLogState>({
  name: '@keel/agent/request-log',
  init: () => ({ context: null, header: null }),
  apply(state, event) {
    if (event.type === 'request/context') return { ...state, context: withoutStep(event.data) }
    if (event.type === 'request/header') return { ...state, header: withoutStep(event.data) }
    return state
  },
  checkpoint: { version: 1 },
})

/** `sha256:` over the texts of the system messages that open `messages` (what a provider takes as the system prompt). */
export function systemDigestOf(messages: readonly Message[]): string {
  const first = messages[0]
  // Messages are frozen: a system prompt that is the same objects has the same digest.
  const known = first === undefined ? undefined : systemDigests.get(first)
  if (known !== undefined && sameSystemPrefix(known.prefix, messages)) return known.digest
  const prefix: Message[] = []
  const texts: string[] = []
  for (const message of messages) {
    if (message.role !== 'system') break
    prefix.push(message)
    texts.push(message.content.map((block) => block.text).join(''))
  }
  const digest = canonicalDigest(texts)
  if (first !== undefined && prefix.every((message) => Object.isFrozen(message)))
    systemDigests.set(first, { prefix, digest })
  return digest
}

/** Whether `messages` opens with exactly the system messages of `prefix` (the same objects). */
function sameSystemPrefix(prefix: readonly Message[], messages: readonly Message[]): boolean {
  for (let i = 0; i < prefix.length; i++) if (messages[i] !== prefix[i]) return false
  return messages[prefix.length]?.role !== 'system'
}

const systemDigests = new WeakMap<Message, { prefix: readonly Message[]; digest: string }>()

/** `sha256:` over the tool specs as sent (name, description, JSON Schema), in order. */
export function toolsDigestOf(tools: readonly ToolSpec[]): string {
  const known = digests.get(tools)
  if (known !== undefined) return known
  const digest = canonicalDigest(
    tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  )
  // An agent's specs are one frozen array for its whole life: digested once.
  if (Object.isFrozen(tools)) digests.set(tools, digest)
  return digest
}

const digests = new WeakMap<readonly ToolSpec[], string>()

/** The `request/header` of a request on `route` with `messages` and `tools`. */
export function requestHeaderOf(
  ref: { turn: number; step: number },
  route: ModelRoute,
  messages: readonly Message[],
  tools: readonly ToolSpec[],
): Header {
  const header: Header = {
    ...ref,
    provider: route.provider,
    model: route.model,
    tools: tools.map((t) => t.name),
    toolsDigest: toolsDigestOf(tools),
    systemDigest: systemDigestOf(messages),
  }
  if (route.maxTokens !== undefined) header.maxTokens = route.maxTokens
  if (route.reasoningEffort !== undefined) header.reasoningEffort = route.reasoningEffort
  return header
}

function requestContextOf(ref: { turn: number; step: number }, route: ModelRoute): Context {
  const context: Context = { ...ref, provider: route.provider, model: route.model, modelSource: route.source }
  if (route.endpoint !== undefined && route.endpoint !== '') context.endpoint = route.endpoint
  if (route.contextWindow !== undefined) context.contextWindow = route.contextWindow
  if (route.windowSource !== undefined) context.windowSource = route.windowSource
  if (route.maxOutputTokens !== undefined) context.maxOutputTokens = route.maxOutputTokens
  return context
}

/**
 * What an agent remembers of its latest comparison with the log (owned by its runtime), so
 * that a request like the one before costs no canonical JSON: the inputs compared, and the
 * log's request state they matched.
 */
export interface RequestMemo {
  logged?: RequestLogState
  route?: ModelRoute
  systemDigest?: string
  tools?: readonly ToolSpec[]
}

/**
 * Inside a step, before its request is sent: appends `request/context` when the route
 * differs from the latest recorded one, then `request/header` when the header does (both
 * `ignorable`: they inform, the surface does not depend on them). With `memo`, a request
 * whose facts are those last compared, while the log recorded nothing since, is not
 * compared again.
 */
export function recordRequest(
  session: Session,
  ref: { turn: number; step: number },
  route: ModelRoute,
  messages: readonly Message[],
  tools: readonly ToolSpec[],
  memo: RequestMemo = {},
): void {
  const logged = session.project(requestLogProjection)
  const systemDigest = systemDigestOf(messages)
  // Routes and specs are frozen objects an agent keeps while nothing changes: the same
  // objects mean the same facts.
  if (
    memo.logged === logged &&
    memo.route === route &&
    memo.systemDigest === systemDigest &&
    memo.tools === tools &&
    Object.isFrozen(route) &&
    Object.isFrozen(tools)
  )
    return
  const context = requestContextOf(ref, route)
  if (withoutStep(context) !== logged.context) session.append('request/context', context, { ignorable: true })
  const header = requestHeaderOf(ref, route, messages, tools)
  if (withoutStep(header) !== logged.header) session.append('request/header', header, { ignorable: true })
  memo.logged = session.project(requestLogProjection)
  memo.route = route
  memo.systemDigest = systemDigest
  memo.tools = tools
}
