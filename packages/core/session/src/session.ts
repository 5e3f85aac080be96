import { deepFreezeJson, NonJsonValueError, toFrozenJson } from '@keel/base'
import type { Message } from '@keel/llm'
import type { z } from 'zod'
import { SessionError, type SessionErrorCode } from './errors.js'
import { sessionHeaderValidator } from './events.generated.js'
import type { SessionEventMap } from './events.js'
import { KNOWN_EVENT_TYPES, type KnownEventType } from './known-event-types.js'
import {
  type EventInvariant,
  type EventRegistration,
  getEventRegistration,
  sessionIdSchema,
} from './registry.js'
import {
  type NoSurfaceFields,
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionEventType,
  type SessionHeader,
  type SessionId,
  type SessionSeq,
  type SurfaceEventType,
  type SurfaceFields,
  type SurfaceOp,
} from './types.js'

/** Options of one append. Surface fields type-check only for surface event types. */
export type AppendOptions<T extends SessionEventType> = {
  /** Mark the event skippable by readers that do not know its type. */
  ignorable?: true
  /** Override the event time (Unix ms); the session clock otherwise. */
  time?: number
} & (T extends SurfaceEventType ? SurfaceFields : NoSurfaceFields)

/** The header fields a caller may set at creation; `id` and `version` are the session's. */
export type SessionHeaderInit = Partial<Omit<SessionHeader, 'id'>>

/** Construction options. */
export interface SessionOptions {
  /** Time source for appended events, Unix ms. Defaults to `Date.now`. */
  clock?: () => number
  /**
   * A last check of each live append, run after every other validation and just before
   * the event is committed; throwing refuses the append and changes nothing. Stores use it
   * to refuse an event they could not persist (a line over the size cap, a closed handle).
   * Not run for replayed seed events.
   */
  beforeCommit?: (event: SessionEvent, session: Session) => void
  /**
   * The event types this build knows without their plugin loaded (stored events of these
   * types are checked as plain JSON and kept verbatim). Defaults to the generated
   * {@link KNOWN_EVENT_TYPES}.
   */
  knownEventTypes?: Readonly<Record<string, KnownEventType>>
  /**
   * The seed's values come straight from `JSON.parse` and nothing else holds them (a store
   * reading its log): they are plain JSON by construction, so they are frozen in place
   * instead of checked and copied. Schemas and every other rule still apply.
   */
  parsedSeed?: boolean
}

/**
 * A pure fold over the log. Plugins keep no durable state of their own: their state is a
 * projection, so resume and fork rebuild it exactly. `apply` must not mutate `state` in a
 * way visible to earlier results; return a new value when something changes.
 */
export interface Projection<S> {
  readonly name: string
  init(): S
  apply(state: S, event: SessionEvent): S
}

/** Called after an event is committed. A listener may not append (that is an error). */
export type SessionListener = (event: SessionEvent, session: Session) => void

/** A committed `tool/call` of the open turn that has no `tool/result` yet. */
export interface UnansweredCall {
  readonly turn: number
  readonly step: number
  readonly callId: string
  readonly name: string
}

/** The open turn and step, as seen by the lifecycle rules. */
export interface OpenTurn {
  readonly turn: number
  /** The open step, or null between steps. */
  readonly step: number | null
}

const SURFACE_TYPES: ReadonlySet<string> = new Set<SurfaceEventType>([
  'system/message',
  'developer/message',
  'user/message',
  'assistant/message',
  'tool/result',
])

/** Core event types that must be inside an open step. */
const STEP_SCOPED: ReadonlySet<string> = new Set([
  'assistant/message',
  'assistant/attempt',
  'tool/call',
  'tool/result',
])

interface SurfaceNode {
  readonly seq: number
  readonly message: Message
  prev: SurfaceNode | null
  next: SurfaceNode | null
}

interface ProjectionCache {
  state: unknown
  /** Number of events already folded. */
  upTo: number
}

type AnyEvent = {
  type: string
  seq: number
  time: number
  data: unknown
  ignorable?: true
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: readonly number[]
}
type StoredEnvelope = {
  type: string
  seq: number
  time: number
  data: unknown
  ignorable?: true
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: number[]
}

/**
 * One session's event log in memory, with everything derived from it: the surface (what
 * the model sees), the lifecycle state (open turn and step, tool calls awaiting results)
 * and cached projections. Every append is validated before anything changes; a refused
 * append leaves the session exactly as it was.
 *
 * Stores persist a session by subscribing to it; `Session` itself never touches disk.
 */
export class Session {
  readonly #header: SessionHeader
  readonly #events: SessionEvent[] = []
  readonly #clock: () => number
  readonly #beforeCommit: ((event: SessionEvent, session: Session) => void) | undefined
  readonly #parsedSeed: boolean
  readonly #known: Readonly<Record<string, KnownEventType>>
  readonly #listeners = new Set<SessionListener>()
  readonly #projections = new Map<Projection<unknown>, ProjectionCache>()
  /** The state of each registered invariant fold, folded over this log. */
  readonly #invariantStates = new Map<EventInvariant<unknown>, unknown>()
  /** Seqs of stored events whose type this build does not know (ignorable ones only). */
  readonly #opaque = new Set<number>()
  #notifying = false

  // lifecycle
  #openTurn: number | null = null
  #lastTurn = 0
  #openStep: number | null = null
  #lastStep = 0
  /** Tool calls of the open turn: call id → its step, tool name and whether its result was committed. */
  #toolCalls = new Map<string, { step: number; name: string; answered: boolean }>()

  // surface: a linked list for O(range) replaces, plus a message array kept in step on append
  #surfaceBySeq = new Map<number, SurfaceNode>()
  #head: SurfaceNode | null = null
  #tail: SurfaceNode | null = null
  #messages: Message[] = []
  #messagesValid = true

  private constructor(header: SessionHeader, options: SessionOptions) {
    this.#header = Object.freeze({ ...header })
    this.#clock = options.clock ?? Date.now
    this.#beforeCommit = options.beforeCommit
    this.#parsedSeed = options.parsedSeed === true
    this.#known = options.knownEventTypes ?? KNOWN_EVENT_TYPES
  }

  /**
   * Creates a session. With `seed`, the stored events are replayed through the same
   * validation as live appends (schemas, lifecycle, surface rules), plus envelope checks:
   * `seq` equal to the index, unknown required types refused, unknown ignorable types kept
   * verbatim but not interpreted, known types whose plugin is not loaded checked as plain
   * JSON and kept verbatim.
   */
  static create(
    id: string,
    header: SessionHeaderInit = {},
    seed?: Iterable<unknown>,
    options: SessionOptions = {},
  ): Session {
    if (!sessionIdSchema.safeParse(id).success) {
      throw new SessionError(
        'HEADER_INVALID',
        `session id ${JSON.stringify(id)} is invalid: use 1–128 of A-Z a-z 0-9 . _ - (no leading dot)`,
        { id },
      )
    }
    const version = header.version ?? SESSION_FORMAT_VERSION
    if (version !== SESSION_FORMAT_VERSION) {
      throw new SessionError(
        'HEADER_INVALID',
        `session ${id} has format version ${version}; this build reads version ${SESSION_FORMAT_VERSION} (stores migrate older versions before loading)`,
        { id, version },
      )
    }
    const full: SessionHeader = {
      ...header,
      version,
      id: id as SessionId,
      createdAt: header.createdAt ?? (options.clock ?? Date.now)(),
    }
    let frozen: SessionHeader
    try {
      frozen = toFrozenJson(full, 'header', `session ${id} header`)
    } catch (error) {
      throw asSessionError(error, 'header')
    }
    const checked = sessionHeaderValidator.safeParse(frozen)
    if (!checked.success) {
      const issue = checked.error.issues[0]!
      throw new SessionError(
        'HEADER_INVALID',
        `session ${id}: ${formatPath(issue.path, 'header')}: ${issue.message}`,
        { id, path: formatPath(issue.path, 'header') },
      )
    }
    const session = new Session(frozen, options)
    if (seed) for (const raw of seed) session.#load(raw)
    return session
  }

  /** The logical header. */
  get header(): SessionHeader {
    return this.#header
  }

  get id(): SessionId {
    return this.#header.id
  }

  /** The log, in seq order. A live read-only view: it grows as events are appended. */
  get events(): readonly SessionEvent[] {
    return this.#events
  }

  /** The seq the next append gets. */
  get nextSeq(): number {
    return this.#events.length
  }

  /**
   * The first seq of this session's own work: after the `session/end-seed` marker of a
   * fork, 0 otherwise.
   */
  get firstLiveSeq(): number {
    const seedLength = this.#header.seedLength
    return seedLength === undefined ? 0 : seedLength + 1
  }

  /** The open turn and step, or null when no turn is open. */
  get openTurn(): OpenTurn | null {
    return this.#openTurn === null ? null : { turn: this.#openTurn, step: this.#openStep }
  }

  /**
   * The committed `tool/call`s of the open turn that have no `tool/result` yet, in call
   * order. Empty between turns: a step cannot end while one of its calls is unanswered.
   */
  get unansweredCalls(): readonly UnansweredCall[] {
    const turn = this.#openTurn
    if (turn === null) return []
    const out: UnansweredCall[] = []
    for (const [callId, call] of this.#toolCalls) {
      if (!call.answered) out.push({ turn, step: call.step, callId, name: call.name })
    }
    return out
  }

  /** The highest turn number used so far (0 before the first turn). */
  get lastTurn(): number {
    return this.#lastTurn
  }

  /** Whether `seq` is a stored event of a type this build does not know (kept, not interpreted). */
  isOpaque(seq: number): boolean {
    return this.#opaque.has(seq)
  }

  /**
   * Validates and commits one event, then notifies subscribers. Throws {@link SessionError}
   * and changes nothing when the event is refused.
   */
  append<T extends SessionEventType>(
    type: T,
    data: SessionEventMap[T],
    options?: AppendOptions<T>,
  ): SessionEvent<T> {
    if (this.#notifying) {
      throw new SessionError(
        'REENTRANT_APPEND',
        `cannot append '${type}' to session ${this.id} from inside a subscriber; queue it and append after the listener returns`,
        { type },
      )
    }
    const registration = getEventRegistration(type)
    if (!registration) {
      throw new SessionError(
        'EVENT_TYPE_UNREGISTERED',
        `cannot append '${type}': no loaded package registered it (import the plugin that owns it, whose events.ts calls registerEvents)`,
        { type },
      )
    }
    const opts = (options ?? {}) as AppendOptions<SessionEventType> & SurfaceFields
    const seq = this.#events.length
    const time = opts.time ?? this.#clock()
    const event = this.#build(
      {
        type,
        seq,
        time,
        data,
        ignorable: opts.ignorable,
        surfaceOp: opts.surfaceOp,
        sourceEventSeqs: opts.sourceEventSeqs,
      },
      true,
    )
    const frozenData = this.#checkData(type, seq, event.data, registration.schema)
    this.#checkLiveRules(type, seq, frozenData as Record<string, unknown>, event)
    const committed = Object.freeze({ ...event, data: frozenData }) as SessionEvent
    const advance = this.#invariantStep(committed, registration, true)
    this.#commit(committed, true, this.#beforeCommit)
    advance?.()
    this.#notify(committed)
    return committed as SessionEvent<T>
  }

  /**
   * Registers a listener called after each commit (not for replayed seed events).
   * Returns the unsubscribe function.
   */
  subscribe(listener: SessionListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /**
   * The messages of the current surface, in order: what the next model call sees. A live
   * read-only view, valid until the next append; copy it to keep a snapshot. An append
   * costs O(1); a replace costs O(range) plus one rebuild on the next call.
   */
  deriveMessages(): readonly Message[] {
    if (!this.#messagesValid) {
      const messages: Message[] = []
      for (let node = this.#head; node; node = node.next) messages.push(node.message)
      this.#messages = messages
      this.#messagesValid = true
    }
    return this.#messages
  }

  /** The seqs of the current surface nodes, in surface order. O(surface). */
  surfaceSeqs(): SessionSeq[] {
    const seqs: SessionSeq[] = []
    for (let node = this.#head; node; node = node.next) seqs.push(node.seq as SessionSeq)
    return seqs
  }

  /** Whether `seq` is currently a surface node. */
  isOnSurface(seq: number): boolean {
    return this.#surfaceBySeq.has(seq)
  }

  /**
   * Folds `projection` over the log. Results are cached per projection object and
   * advanced incrementally: a call after N new events costs N applies.
   */
  project<S>(projection: Projection<S>): S {
    let cache = this.#projections.get(projection as Projection<unknown>)
    if (!cache) {
      cache = { state: projection.init(), upTo: 0 }
      this.#projections.set(projection as Projection<unknown>, cache)
    }
    const events = this.#events
    let state = cache.state as S
    for (let i = cache.upTo; i < events.length; i++) {
      if (!this.#opaque.has(i)) state = projection.apply(state, events[i]!)
    }
    cache.state = state
    cache.upTo = events.length
    return state
  }

  /**
   * Copies the prefix through `atSeq` (default: the whole log) into a new session that
   * records its lineage (`parentSession`, `seedLength`) and starts with a
   * `session/end-seed` marker. Refuses a cut inside an open turn.
   */
  fork(childId: string, atSeq?: number, options: SessionOptions = {}): Session {
    const last = atSeq ?? this.#events.length - 1
    if (!Number.isInteger(last) || last < 0 || last >= this.#events.length) {
      throw new SessionError(
        'FORK_CUT_INVALID',
        `cannot fork session ${this.id} at seq ${last}: the log has seqs 0..${this.#events.length - 1}`,
        { atSeq: last },
      )
    }
    const seedLength = last + 1
    const header: SessionHeaderInit = {
      createdAt: (options.clock ?? this.#clock)(),
      parentSession: this.id,
      seedLength,
    }
    if (this.#header.cwd !== undefined) header.cwd = this.#header.cwd
    if (this.#header.agentPreset !== undefined) header.agentPreset = this.#header.agentPreset
    if (this.#header.agentComposition !== undefined) header.agentComposition = this.#header.agentComposition
    const child = Session.create(childId, header, undefined, {
      clock: options.clock ?? this.#clock,
      knownEventTypes: options.knownEventTypes ?? this.#known,
    })
    for (let i = 0; i < seedLength; i++) {
      const event = this.#events[i]!
      if (this.#opaque.has(i)) child.#opaque.add(i)
      const advance = this.#opaque.has(i)
        ? undefined
        : child.#invariantStep(event, getEventRegistration(event.type), false)
      child.#commit(event, false)
      advance?.()
    }
    if (child.#openTurn !== null) {
      throw new SessionError(
        'FORK_CUT_INVALID',
        `cannot fork session ${this.id} at seq ${last}: turn ${child.#openTurn} is still open there; cut before its turn/start or after its turn/end`,
        { atSeq: last, turn: child.#openTurn },
      )
    }
    child.append('session/end-seed', { parentSession: this.id, parentSeq: last as SessionSeq })
    return child
  }

  // ---------------------------------------------------------------------------------------
  // internals

  /** Loads one stored event (seed replay). */
  #load(raw: unknown): void {
    const seq = this.#events.length
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw envelopeError(seq, 'is not an object')
    }
    const stored = raw as Partial<StoredEnvelope> & Record<string, unknown>
    const type = stored.type
    if (typeof type !== 'string' || type.length === 0) throw envelopeError(seq, 'has no string `type`')
    if (stored.seq !== seq) {
      throw new SessionError(
        'EVENT_ENVELOPE_INVALID',
        `event '${type}' at index ${seq} has seq ${JSON.stringify(stored.seq)}; seqs must be contiguous from 0 (a duplicated or missing event)`,
        { seq, type, storedSeq: stored.seq },
      )
    }
    for (const key of Object.keys(stored)) {
      if (!ENVELOPE_KEYS.has(key)) throw envelopeError(seq, `has an unknown envelope field '${key}'`, type)
    }
    if (!('data' in stored)) throw envelopeError(seq, 'has no `data`', type)
    const registration = getEventRegistration(type)
    const known = Object.hasOwn(this.#known, type) ? this.#known[type] : undefined
    if (!registration && !known) {
      if (stored.ignorable === true) {
        let frozen: SessionEvent
        try {
          frozen = toFrozenJson(
            stored,
            `event[${seq}]`,
            `ignorable event '${type}' at seq ${seq}`,
          ) as unknown as SessionEvent
        } catch (error) {
          throw asSessionError(error, `event[${seq}]`, type, seq)
        }
        this.#opaque.add(seq)
        this.#events.push(frozen)
        return
      }
      throw new SessionError(
        'UNKNOWN_REQUIRED_EVENT',
        `session ${this.id}: event '${type}' at seq ${seq} is unknown to this build and not marked ignorable; it may change how the rest of the log reads, so the session is refused (update Keel or load the plugin that owns '${type}')`,
        { type, seq },
      )
    }
    // `stored` has only envelope keys (checked above): #build reads it directly, and the
    // event it returns gets its checked data in place (no intermediate copies: this is the
    // load hot path).
    const event = this.#build(stored as StoredEnvelope)
    ;(event as { data: unknown }).data = this.#checkData(
      type,
      seq,
      event.data,
      registration?.schema,
      this.#parsedSeed,
    )
    const frozen = Object.freeze(event) as unknown as SessionEvent
    const advance = this.#invariantStep(frozen, registration, true)
    this.#commit(frozen, true)
    advance?.()
  }

  /**
   * Runs the owning package's invariant fold over `event` (see `registerEvents`). Returns the
   * step that records the next state, to run once the event is committed; throws
   * `EVENT_INVARIANT_VIOLATED` when the fold refuses the event and `validate` is set.
   */
  #invariantStep(
    event: SessionEvent,
    registration: EventRegistration | undefined,
    validate: boolean,
  ): (() => void) | undefined {
    const invariant = registration?.invariant
    if (!invariant) return undefined
    const state = this.#invariantStates.has(invariant)
      ? this.#invariantStates.get(invariant)
      : invariant.init()
    const type = event.type as string
    const seq = event.seq as number
    const step = invariant.check(state, { type, seq, data: event.data })
    if (!step.ok) {
      if (!validate) return undefined
      throw new SessionError(
        'EVENT_INVARIANT_VIOLATED',
        `event '${type}' (seq ${seq}) breaks an invariant of ${registration!.owner}: ${step.reason}`,
        {
          type,
          seq,
          owner: registration!.owner,
          reason: step.reason,
          ...(step.code === undefined ? {} : { invariantCode: step.code }),
        },
      )
    }
    return () => {
      this.#invariantStates.set(invariant, step.state)
    }
  }

  /** Checks the envelope fields and builds the (not yet frozen-data) event. Throws on bad input. */
  #build(e: StoredEnvelope, live = false): AnyEvent {
    const { type, seq } = e
    if (typeof e.time !== 'number' || !Number.isFinite(e.time) || e.time < 0) {
      const reason = `has time ${typeof e.time === 'string' ? JSON.stringify(e.time) : String(e.time)}; expected Unix epoch milliseconds (a finite number ≥ 0)`
      if (!live) throw envelopeError(seq, reason, type)
      throw new SessionError(
        'EVENT_ENVELOPE_INVALID',
        `cannot append '${type}' at seq ${seq}: it ${reason}`,
        {
          seq,
          type,
          time: String(e.time),
        },
      )
    }
    if (e.ignorable !== undefined && e.ignorable !== true) {
      throw envelopeError(seq, 'has `ignorable` other than true', type)
    }
    const isSurface = SURFACE_TYPES.has(type)
    if (!isSurface && (e.surfaceOp !== undefined || e.sourceEventSeqs !== undefined)) {
      throw new SessionError(
        'SURFACE_FIELDS_NOT_ALLOWED',
        `event '${type}' (seq ${seq}) carries ${e.surfaceOp !== undefined ? 'surfaceOp' : 'sourceEventSeqs'}, but only surface events (${[...SURFACE_TYPES].join(', ')}) may`,
        { type, seq },
      )
    }
    const event: Record<string, unknown> = { type, seq, time: e.time, data: e.data }
    if (e.ignorable) event.ignorable = true
    if (e.surfaceOp !== undefined) {
      event.surfaceOp = this.#checkSurfaceOp(type, seq, e.surfaceOp)
    }
    if (e.sourceEventSeqs !== undefined) {
      const sources = e.sourceEventSeqs
      if (!Array.isArray(sources) || sources.some((s) => !Number.isInteger(s) || s < 0 || s >= seq)) {
        throw new SessionError(
          'SURFACE_SOURCES_INVALID',
          `event '${type}' (seq ${seq}): sourceEventSeqs must be earlier seqs (integers 0..${seq - 1})`,
          { type, seq, sourceEventSeqs: sources },
        )
      }
      event.sourceEventSeqs = Object.freeze([...sources])
    }
    return event as unknown as AnyEvent
  }

  #checkSurfaceOp(type: string, seq: number, op: unknown): SurfaceOp {
    if (op === 'append') return op
    if (op !== null && typeof op === 'object' && (op as { op?: unknown }).op === 'replace') {
      const { startSeq, endSeq } = op as { startSeq?: unknown; endSeq?: unknown }
      const keys = Object.keys(op)
      if (Number.isInteger(startSeq) && Number.isInteger(endSeq) && keys.length === 3) {
        return Object.freeze({
          op: 'replace',
          startSeq: startSeq as SessionSeq,
          endSeq: endSeq as SessionSeq,
        })
      }
    }
    throw new SessionError(
      'SURFACE_REPLACE_INVALID',
      `event '${type}' (seq ${seq}): surfaceOp must be 'append' or { op: 'replace', startSeq, endSeq } with integer seqs`,
      { type, seq, surfaceOp: op },
    )
  }

  /** JSON check + copy + freeze, then the registered schema (or JSON only when unloaded). */
  #checkData(
    type: string,
    seq: number,
    data: unknown,
    schema: z.ZodType<unknown> | undefined,
    parsed = false,
  ): unknown {
    let frozen: unknown
    try {
      frozen = parsed
        ? deepFreezeJson(data, 'data', `event '${type}' (seq ${seq})`)
        : toFrozenJson(data, 'data', `event '${type}' (seq ${seq})`)
    } catch (error) {
      throw asSessionError(error, 'data', type, seq)
    }
    if (schema) {
      const result = schema.safeParse(frozen)
      if (!result.success) {
        const issue = result.error.issues[0]!
        const path = formatPath(issue.path)
        throw new SessionError(
          'EVENT_DATA_INVALID',
          `event '${type}' (seq ${seq}): ${path}: ${issue.message}${result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more)` : ''}`,
          {
            type,
            seq,
            path,
            issues: result.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message })),
          },
        )
      }
    }
    return frozen
  }

  /**
   * Applies lifecycle and surface rules and commits. With `validate` false (fork copies of
   * already-validated events) the rules still update state but cannot fail.
   */
  #commit(
    event: SessionEvent,
    validate: boolean,
    beforeCommit?: (event: SessionEvent, session: Session) => void,
  ): void {
    const type = event.type as string
    const seq = event.seq as number
    const data = event.data as Record<string, unknown>
    const registered = !this.#opaque.has(seq)
    // 1. lifecycle: compute the next state without mutating, then apply.
    let openTurn = this.#openTurn
    let lastTurn = this.#lastTurn
    let openStep = this.#openStep
    let lastStep = this.#lastStep
    let resetCalls = false
    let callToAdd: string | null = null
    let callStep = 0
    let callName = ''
    let resultFor: string | null = null
    if (registered) {
      switch (type) {
        case 'turn/start': {
          const turn = data.turn as number
          if (validate && openTurn !== null) {
            throw lifecycle('TURN_ALREADY_OPEN', type, seq, `turn ${openTurn} is still open; end it first`)
          }
          if (validate && turn <= lastTurn) {
            throw lifecycle(
              'TURN_NUMBER_INVALID',
              type,
              seq,
              `turn ${turn} is not after the last turn ${lastTurn}`,
            )
          }
          openTurn = turn
          lastTurn = turn
          openStep = null
          lastStep = 0
          resetCalls = true
          break
        }
        case 'turn/end': {
          if (validate) {
            this.#requireTurn(type, seq, data.turn)
            if (openStep !== null) {
              throw lifecycle(
                'STEP_STILL_OPEN',
                type,
                seq,
                `step ${openStep} is still open; append its step/end first`,
              )
            }
          }
          openTurn = null
          resetCalls = true
          break
        }
        case 'step/start': {
          if (validate) {
            this.#requireTurn(type, seq, data.turn)
            if (openStep !== null) {
              throw lifecycle('STEP_ALREADY_OPEN', type, seq, `step ${openStep} is still open`)
            }
            if ((data.step as number) <= lastStep) {
              throw lifecycle('OUTSIDE_STEP', type, seq, `step ${data.step} is not after step ${lastStep}`)
            }
          }
          openStep = data.step as number
          lastStep = openStep
          break
        }
        case 'step/end':
          if (validate) this.#requireStep(type, seq, data)
          openStep = null
          break
        case 'tool/call': {
          if (validate) this.#requireStep(type, seq, data)
          const callId = data.callId as string
          if (validate && this.#toolCalls.has(callId)) {
            throw lifecycle(
              'DUPLICATE_TOOL_CALL',
              type,
              seq,
              `call id '${callId}' was already used in turn ${openTurn}`,
            )
          }
          callToAdd = callId
          callStep = data.step as number
          callName = data.name as string
          break
        }
        case 'tool/result': {
          if (this.#isResultRewrite(event as AnyEvent)) break
          if (validate) this.#requireStep(type, seq, data)
          const callId = (data.message as { toolCallId: string }).toolCallId
          const answered = this.#toolCalls.get(callId)
          if (validate && answered === undefined) {
            throw lifecycle(
              'TOOL_RESULT_WITHOUT_CALL',
              type,
              seq,
              `no tool/call with id '${callId}' in turn ${openTurn}; append the tool/call first`,
            )
          }
          if (validate && answered?.answered) {
            throw lifecycle('DUPLICATE_TOOL_RESULT', type, seq, `call '${callId}' already has a result`)
          }
          resultFor = callId
          break
        }
        default:
          if (validate && STEP_SCOPED.has(type)) this.#requireStep(type, seq, data)
      }
    }
    // 2. surface
    const isSurface = registered && SURFACE_TYPES.has(type)
    const surfaceEvent = event as AnyEvent
    let replaced: SurfaceNode[] | null = null
    if (isSurface && typeof surfaceEvent.surfaceOp === 'object') {
      replaced = this.#collectReplace(surfaceEvent, validate)
    } else if (validate && isSurface && surfaceEvent.sourceEventSeqs) {
      // sources already range-checked in #build
    }
    beforeCommit?.(event, this)
    // 3. commit (nothing below may throw)
    this.#openTurn = openTurn
    this.#lastTurn = lastTurn
    this.#openStep = openStep
    this.#lastStep = lastStep
    if (resetCalls) this.#toolCalls = new Map()
    if (callToAdd !== null)
      this.#toolCalls.set(callToAdd, { step: callStep, name: callName, answered: false })
    if (resultFor !== null) {
      const call = this.#toolCalls.get(resultFor)
      if (call) call.answered = true
    }
    this.#events.push(event)
    if (isSurface) {
      const node: SurfaceNode = {
        seq,
        message: (data as { message: Message }).message,
        prev: null,
        next: null,
      }
      if (replaced) this.#replaceNodes(replaced, node)
      else this.#appendNode(node)
    }
  }

  /**
   * Rules for new appends only (logs written before them still load): a step ends only
   * after every tool call it committed has its result, and a `system/message` never comes
   * after other messages — it opens a blank surface, or replaces the system message that
   * opens the surface (the logged way to change the system prompt).
   */
  #checkLiveRules(type: string, seq: number, data: Record<string, unknown>, event: AnyEvent): void {
    if (type === 'step/end') {
      const open = [...this.#toolCalls]
        .filter(([, call]) => !call.answered && call.step === data.step)
        .map(([id]) => id)
      if (open.length > 0) {
        throw lifecycle(
          'TOOL_CALL_UNANSWERED',
          type,
          seq,
          `tool call(s) ${open.map((id) => `'${id}'`).join(', ')} of step ${data.step} have no tool/result; append one for each first`,
        )
      }
    } else if (type === 'system/message' && this.#head !== null) {
      const op = event.surfaceOp
      const head = this.#head
      const replacesHead =
        typeof op === 'object' &&
        op !== null &&
        (op as { startSeq: number }).startSeq === head.seq &&
        head.message.role === 'system'
      if (!replacesHead) {
        throw lifecycle(
          'SYSTEM_MESSAGE_NOT_FIRST',
          type,
          seq,
          head.message.role === 'system'
            ? 'the surface already opens with a system message; replace it (surfaceOp replace of its seq) instead of appending another'
            : 'the session already has messages and no system message; a system message may only open a blank surface',
        )
      }
    }
  }

  #requireTurn(type: string, seq: number, turn: unknown): void {
    if (this.#openTurn === null) throw lifecycle('OUTSIDE_TURN', type, seq, 'no turn is open')
    if (turn !== this.#openTurn) {
      throw lifecycle('OUTSIDE_TURN', type, seq, `it names turn ${turn} but turn ${this.#openTurn} is open`)
    }
  }

  #requireStep(type: string, seq: number, data: Record<string, unknown>): void {
    this.#requireTurn(type, seq, data.turn)
    if (this.#openStep === null) throw lifecycle('OUTSIDE_STEP', type, seq, 'no step is open')
    if (data.step !== this.#openStep) {
      throw lifecycle(
        'OUTSIDE_STEP',
        type,
        seq,
        `it names step ${data.step} but step ${this.#openStep} is open`,
      )
    }
  }

  /**
   * Whether `event` is a `tool/result` that replaces exactly one earlier `tool/result` node
   * of the same call (same call id, turn and step): a rewrite of an answered call, such as
   * compaction swapping an old output for a placeholder. The call was answered when the
   * original was committed, so the step and pairing rules do not apply again; the replace
   * itself is still checked like any other.
   */
  #isResultRewrite(event: AnyEvent): boolean {
    const op = event.surfaceOp
    if (typeof op !== 'object' || op.startSeq !== op.endSeq) return false
    const original = this.#events[op.startSeq]
    if (original?.type !== 'tool/result' || this.#opaque.has(op.startSeq)) return false
    const data = event.data as SessionEventMap['tool/result']
    return (
      data.message.toolCallId === original.data.message.toolCallId &&
      data.turn === original.data.turn &&
      data.step === original.data.step
    )
  }

  /** Validates a replace and returns the nodes it shadows, in surface order. O(range). */
  #collectReplace(event: AnyEvent, validate: boolean): SurfaceNode[] {
    const op = event.surfaceOp as { startSeq: number; endSeq: number }
    const fail = (reason: string): never => {
      throw new SessionError(
        'SURFACE_REPLACE_INVALID',
        `event '${event.type}' (seq ${event.seq}) replaces ${op.startSeq}..${op.endSeq}: ${reason}`,
        { type: event.type, seq: event.seq, startSeq: op.startSeq, endSeq: op.endSeq },
      )
    }
    const start = this.#surfaceBySeq.get(op.startSeq)
    if (!start) return fail(`seq ${op.startSeq} is not a current surface node`)
    if (!this.#surfaceBySeq.has(op.endSeq)) return fail(`seq ${op.endSeq} is not a current surface node`)
    const nodes: SurfaceNode[] = []
    let node: SurfaceNode | null = start
    while (node && node.seq !== op.endSeq) {
      nodes.push(node)
      node = node.next
    }
    if (!node) return fail(`seq ${op.endSeq} comes before seq ${op.startSeq} on the surface`)
    nodes.push(node)
    if (validate) {
      const cited = new Set<number>(event.sourceEventSeqs ?? [])
      const missing = nodes.filter((n) => !cited.has(n.seq)).map((n) => n.seq)
      if (missing.length > 0) {
        throw new SessionError(
          'SURFACE_SOURCES_INVALID',
          `event '${event.type}' (seq ${event.seq}) shadows surface nodes ${missing.join(', ')} without citing them in sourceEventSeqs`,
          { type: event.type, seq: event.seq, missing },
        )
      }
    }
    return nodes
  }

  #appendNode(node: SurfaceNode): void {
    node.prev = this.#tail
    if (this.#tail) this.#tail.next = node
    else this.#head = node
    this.#tail = node
    this.#surfaceBySeq.set(node.seq, node)
    if (this.#messagesValid) this.#messages.push(node.message)
  }

  #replaceNodes(nodes: SurfaceNode[], node: SurfaceNode): void {
    const first = nodes[0]!
    const last = nodes[nodes.length - 1]!
    node.prev = first.prev
    node.next = last.next
    if (first.prev) first.prev.next = node
    else this.#head = node
    if (last.next) last.next.prev = node
    else this.#tail = node
    for (const n of nodes) this.#surfaceBySeq.delete(n.seq)
    this.#surfaceBySeq.set(node.seq, node)
    this.#messagesValid = false
  }

  #notify(event: SessionEvent): void {
    if (this.#listeners.size === 0) return
    this.#notifying = true
    const failures: unknown[] = []
    try {
      for (const listener of this.#listeners) {
        try {
          listener(event, this)
        } catch (error) {
          failures.push(error)
        }
      }
    } finally {
      this.#notifying = false
    }
    if (failures.length > 0) {
      throw new SessionError(
        'SUBSCRIBER_FAILED',
        `event '${event.type}' was committed at seq ${event.seq}, but ${failures.length} subscriber(s) threw: ${failures.map((f) => (f instanceof Error ? f.message : String(f))).join('; ')}`,
        { type: event.type, seq: event.seq, committed: true },
        { cause: failures[0] },
      )
    }
  }
}

const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'type',
  'seq',
  'time',
  'data',
  'ignorable',
  'surfaceOp',
  'sourceEventSeqs',
])

function formatPath(path: ReadonlyArray<PropertyKey>, root = 'data'): string {
  let out = root
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`
  return out
}

function envelopeError(seq: number, reason: string, type?: string): SessionError {
  return new SessionError(
    'EVENT_ENVELOPE_INVALID',
    `stored event at seq ${seq}${type ? ` ('${type}')` : ''} ${reason}`,
    { seq, type },
  )
}

function lifecycle(code: SessionErrorCode, type: string, seq: number, reason: string): SessionError {
  return new SessionError(code, `cannot append '${type}' at seq ${seq}: ${reason}`, { type, seq })
}

function asSessionError(error: unknown, _root: string, type?: string, seq?: number): unknown {
  if (error instanceof NonJsonValueError) {
    return new SessionError('NON_JSON_DATA', error.message, { ...error.details, type, seq })
  }
  return error
}
