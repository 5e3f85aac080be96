import { toFrozenJson } from '@keel/base'
import type { Message } from '@keel/llm'
import { type AnyEvent, asSessionError, buildEvent, checkData, checkStoredShape } from './envelope.js'
import { SessionError } from './errors.js'
import type { SessionEventMap } from './events.js'
import { forkInsideTurnError, planFork } from './fork.js'
import { buildHeader } from './header.js'
import { InvariantFolds } from './invariant-folds.js'
import { KNOWN_EVENT_TYPES, type KnownEventType } from './known-event-types.generated.js'
import {
  applyLifecycle,
  checkLiveLifecycle,
  initialLifecycle,
  isResultRewrite,
  type LifecycleChange,
  type OpenTurn,
  planLifecycle,
  type UnansweredCall,
  unansweredCalls,
} from './lifecycle.js'
import type { AppendOptions, SessionHeaderInit, SessionOptions } from './options.js'
import { type Projection, ProjectionCache } from './projections.js'
import { getEventRegistration } from './registry.js'
import { type SessionListener, Subscribers } from './subscribers.js'
import { SURFACE_TYPES, Surface, type SurfaceNode, type SurfaceReplace } from './surface.js'
import type {
  SessionEvent,
  SessionEventType,
  SessionHeader,
  SessionId,
  SessionSeq,
  SurfaceFields,
} from './types.js'

/**
 * One session's event log in memory, with everything derived from it: the surface (what
 * the model sees), the lifecycle state (open turn and step, tool calls awaiting results)
 * and cached projections. Every append is validated before anything changes; a refused
 * append leaves the session exactly as it was.
 *
 * This class holds the log and orders the steps of an append, a load and a fork; each
 * rule lives in its own module (envelope, lifecycle, surface, invariants, projections,
 * subscribers, fork). Stores persist a session by subscribing to it; `Session` itself
 * never touches disk.
 */
export class Session {
  readonly #header: SessionHeader
  readonly #events: SessionEvent[] = []
  readonly #clock: () => number
  readonly #beforeCommit: ((event: SessionEvent, session: Session) => void) | undefined
  readonly #parsedSeed: boolean
  readonly #known: Readonly<Record<string, KnownEventType>>
  readonly #subscribers = new Subscribers()
  readonly #projections = new ProjectionCache()
  readonly #invariants = new InvariantFolds()
  /** Seqs of stored events whose type this build does not know (ignorable ones only). */
  readonly #opaque = new Set<number>()
  readonly #lifecycle = initialLifecycle()
  readonly #surface = new Surface()
  /** The interpreted (not opaque) event at a seq, for the rules that look back. */
  readonly #interpreted = (seq: number): SessionEvent | undefined =>
    this.#opaque.has(seq) ? undefined : this.#events[seq]
  readonly #isOpaque = (seq: number): boolean => this.#opaque.has(seq)
  readonly #keepUnknown: boolean

  private constructor(header: SessionHeader, options: SessionOptions) {
    this.#header = header
    this.#clock = options.clock ?? Date.now
    this.#beforeCommit = options.beforeCommit
    this.#parsedSeed = options.parsedSeed === true
    this.#known = options.knownEventTypes ?? KNOWN_EVENT_TYPES
    this.#keepUnknown = options.keepUnknownEvents === true
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
    const session = new Session(buildHeader(id, header, options.clock ?? Date.now), options)
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
    const { openTurn, openStep } = this.#lifecycle
    return openTurn === null ? null : { turn: openTurn, step: openStep }
  }

  /**
   * The committed `tool/call`s of the open turn that have no `tool/result` yet, in call
   * order. Empty between turns: a step cannot end while one of its calls is unanswered.
   */
  get unansweredCalls(): readonly UnansweredCall[] {
    return unansweredCalls(this.#lifecycle)
  }

  /** The highest turn number used so far (0 before the first turn). */
  get lastTurn(): number {
    return this.#lifecycle.lastTurn
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
    if (this.#subscribers.notifying) {
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
    const event = buildEvent(
      {
        type,
        seq,
        time: opts.time ?? this.#clock(),
        data,
        ignorable: opts.ignorable,
        surfaceOp: opts.surfaceOp,
        sourceEventSeqs: opts.sourceEventSeqs,
      },
      true,
    )
    event.data = checkData(type, seq, event.data, registration.schema, false)
    checkLiveLifecycle(
      this.#lifecycle,
      type,
      seq,
      event.data as Record<string, unknown>,
      event.surfaceOp,
      this.#surface.head,
    )
    const committed = Object.freeze(event) as SessionEvent
    const advance = this.#invariants.check(committed, registration, true)
    this.#commit(committed, true, this.#beforeCommit)
    this.#invariants.commit(advance)
    this.#subscribers.notify(committed, this)
    return committed as SessionEvent<T>
  }

  /**
   * Registers a listener called after each commit (not for replayed seed events).
   * Returns the unsubscribe function.
   */
  subscribe(listener: SessionListener): () => void {
    return this.#subscribers.add(listener)
  }

  /**
   * The messages of the current surface, in order: what the next model call sees. A live
   * read-only view, valid until the next append; copy it to keep a snapshot. An append
   * costs O(1); a replace costs O(range) plus one rebuild on the next call.
   */
  deriveMessages(): readonly Message[] {
    return this.#surface.messages()
  }

  /** The seqs of the current surface nodes, in surface order. O(surface). */
  surfaceSeqs(): SessionSeq[] {
    return this.#surface.seqs()
  }

  /** Whether `seq` is currently a surface node. */
  isOnSurface(seq: number): boolean {
    return this.#surface.has(seq)
  }

  /**
   * Folds `projection` over the log. Results are cached per projection object and
   * advanced incrementally: a call after N new events costs N applies.
   */
  project<S>(projection: Projection<S>): S {
    return this.#projections.project(projection, this.#events, this.#isOpaque)
  }

  /**
   * Copies the prefix through `atSeq` (default: the whole log) into a new session that
   * records its lineage (`parentSession`, `seedLength`) and starts with a
   * `session/end-seed` marker. Refuses a cut inside an open turn.
   */
  fork(childId: string, atSeq?: number, options: SessionOptions = {}): Session {
    const plan = planFork(
      { header: this.#header, length: this.#events.length, clock: this.#clock, knownEventTypes: this.#known },
      atSeq,
      options,
    )
    const child = Session.create(childId, plan.header, undefined, plan.options)
    for (let i = 0; i < plan.seedLength; i++) child.#adopt(this.#events[i]!, this.#opaque.has(i))
    const open = child.#lifecycle.openTurn
    if (open !== null) throw forkInsideTurnError(this.#header, plan.last, open)
    child.append('session/end-seed', { parentSession: this.id, parentSeq: plan.last as SessionSeq })
    return child
  }

  /** Loads one stored event (seed replay). */
  #load(raw: unknown): void {
    const seq = this.#events.length
    const stored = checkStoredShape(raw, seq)
    const type = stored.type
    const registration = getEventRegistration(type)
    if (!registration && !Object.hasOwn(this.#known, type)) {
      if (stored.ignorable !== true && !this.#keepUnknown) {
        throw new SessionError(
          'UNKNOWN_REQUIRED_EVENT',
          `session ${this.id}: event '${type}' at seq ${seq} is unknown to this build and not marked ignorable; it may change how the rest of the log reads, so the session is refused (update Keel or load the plugin that owns '${type}')`,
          { type, seq },
        )
      }
      let frozen: SessionEvent
      try {
        frozen = toFrozenJson(
          stored,
          `event[${seq}]`,
          `ignorable event '${type}' at seq ${seq}`,
        ) as unknown as SessionEvent
      } catch (error) {
        throw asSessionError(error, type, seq)
      }
      this.#opaque.add(seq)
      this.#events.push(frozen)
      return
    }
    // The event built from `stored` gets its checked data in place (no intermediate
    // copies: this is the load hot path).
    const event = buildEvent(stored, false)
    event.data = checkData(type, seq, event.data, registration?.schema, this.#parsedSeed)
    const frozen = Object.freeze(event) as SessionEvent
    const advance = this.#invariants.check(frozen, registration, true)
    this.#commit(frozen, true)
    this.#invariants.commit(advance)
  }

  /** Adopts an event already validated by the session it is copied from (fork). */
  #adopt(event: SessionEvent, opaque: boolean): void {
    if (opaque) this.#opaque.add(event.seq)
    const advance = opaque
      ? undefined
      : this.#invariants.check(event, getEventRegistration(event.type), false)
    this.#commit(event, false)
    this.#invariants.commit(advance)
  }

  /**
   * Applies the lifecycle and surface rules, runs `beforeCommit`, then commits: every check
   * runs before the first change, and nothing after the first change can throw. With
   * `validate` false (fork copies of already-validated events) the rules still update
   * state but cannot fail.
   */
  #commit(
    event: SessionEvent,
    validate: boolean,
    beforeCommit?: (event: SessionEvent, session: Session) => void,
  ): void {
    const e = event as AnyEvent
    const { type, seq } = e
    const data = e.data as Record<string, unknown>
    const interpreted = !this.#opaque.has(seq)
    let change: LifecycleChange | null = null
    let replaced: SurfaceNode[] | null = null
    const isSurface = interpreted && SURFACE_TYPES.has(type)
    if (interpreted) {
      const rewrite = type === 'tool/result' && isResultRewrite(e.surfaceOp, data, this.#interpreted)
      change = planLifecycle(this.#lifecycle, type, seq, data, validate, rewrite)
      if (isSurface && typeof e.surfaceOp === 'object') {
        replaced = this.#surface.collectReplace(e as SurfaceReplace, validate)
      }
    }
    beforeCommit?.(event, this)
    // commit: nothing below may throw
    if (change !== null) applyLifecycle(this.#lifecycle, change)
    this.#events.push(event)
    if (isSurface) {
      const message = (data as { message: Message }).message
      if (replaced) this.#surface.replace(replaced, seq, message)
      else this.#surface.append(seq, message)
    }
  }
}
