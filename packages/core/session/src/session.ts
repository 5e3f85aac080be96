import type { Message } from '@keel/llm'
import {
  assertResumable,
  captureCheckpoint,
  type Interpretation,
  interpretationOf,
  type SessionCheckpoint,
} from './checkpoint.js'
import { type AnyEvent, buildEvent, checkData } from './envelope.js'
import { appendRefused, SessionError } from './errors.js'
import type { SessionEventMap } from './events.js'
import { forkInsideTurnError, planFork, turnBounds } from './fork.js'
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
import { EventLog, type PrefixReader } from './log.js'
import type { AppendOptions, SessionHeaderInit, SessionOptions } from './options.js'
import { type Projection, ProjectionCache } from './projections.js'
import { getEventRegistration } from './registry.js'
import { restoreCheckpoint } from './resume.js'
import { opaqueEvent, readStored, type StoredReading } from './stored.js'
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
  #log: EventLog
  readonly #clock: () => number
  readonly #beforeCommit: ((event: SessionEvent, session: Session) => void) | undefined
  readonly #reading: StoredReading
  readonly #known: Readonly<Record<string, KnownEventType>>
  readonly #subscribers = new Subscribers()
  readonly #projections = new ProjectionCache()
  readonly #invariants = new InvariantFolds()
  /** Seqs of stored events whose type this build does not know (ignorable ones only). */
  readonly #opaque = new Set<number>()
  /** How each event type met so far was read (a checkpoint records it). */
  readonly #types = new Map<string, Interpretation>()
  #lifecycle = initialLifecycle()
  readonly #surface = new Surface()
  /** The interpreted (not opaque) event at a seq, for the rules that look back. */
  readonly #interpreted = (seq: number): SessionEvent | undefined =>
    this.#opaque.has(seq) || seq < 0 || seq >= this.#log.length ? undefined : this.#log.at(seq)
  readonly #isOpaque = (seq: number): boolean => this.#opaque.has(seq)
  readonly #keepUnknown: boolean

  private constructor(header: SessionHeader, options: SessionOptions) {
    this.#header = header
    this.#log = new EventLog()
    this.#clock = options.clock ?? Date.now
    this.#beforeCommit = options.beforeCommit
    this.#known = options.knownEventTypes ?? KNOWN_EVENT_TYPES
    this.#reading = {
      id: header.id,
      known: this.#known,
      parsed: options.parsedSeed === true,
      trusted: options.trusted,
    }
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

  /**
   * Continues a session from a checkpoint (see {@link checkpoint}) instead of replaying its
   * first `checkpoint.nextSeq` events, then loads `tail` (the stored events after them) as
   * {@link create} loads a seed. Events before the checkpoint that are not held in memory
   * (the surface and the most recent ones are) are read through `prefix` when asked for,
   * and checked as a load checks them. Throws `CHECKPOINT_MISMATCH` when this build cannot
   * use the checkpoint (another format, other folds, an event type read differently); the
   * caller then replays the log instead.
   */
  static resume(
    id: string,
    header: SessionHeaderInit,
    checkpoint: SessionCheckpoint,
    tail: Iterable<unknown>,
    options: SessionOptions & { prefix: PrefixReader },
  ): Session {
    const known = options.knownEventTypes ?? KNOWN_EVENT_TYPES
    assertResumable(id, checkpoint, known)
    const session = new Session(buildHeader(id, header, options.clock ?? Date.now), options)
    const restored = restoreCheckpoint(checkpoint, options.prefix, {
      id: session.id,
      known,
      surface: session.#surface,
      opaque: session.#opaque,
      types: session.#types,
      invariants: session.#invariants,
      projections: session.#projections,
    })
    session.#log = restored.log
    session.#lifecycle = restored.lifecycle
    for (const raw of tail) session.#load(raw)
    return session
  }

  /**
   * The folded state of this session as plain JSON — lifecycle, surface, invariant folds,
   * the states of every registered (and every other checkpointable) projection, advanced to
   * the end of the log first — for a store to keep as a checkpoint. Throws `NON_JSON_DATA`
   * when a projection's saved state is not plain JSON.
   */
  checkpoint(): SessionCheckpoint {
    return captureCheckpoint({
      log: this.#log,
      lifecycle: this.#lifecycle,
      surface: this.#surface,
      opaque: this.#opaque,
      types: this.#types,
      invariants: this.#invariants,
      projections: this.#projections,
      isOpaque: this.#isOpaque,
    })
  }

  /** The logical header. */
  get header(): SessionHeader {
    return this.#header
  }

  get id(): SessionId {
    return this.#header.id
  }

  /**
   * The log, in seq order. A live read-only view: it grows as events are appended. On a
   * session resumed from a checkpoint, events before it that are not in memory are read
   * from the store when indexed (in blocks, a few cached).
   */
  get events(): readonly SessionEvent[] {
    return this.#log.view()
  }

  /** The seq the next append gets. */
  get nextSeq(): number {
    return this.#log.length
  }

  /** The first seq held in memory as a dense run: 0, or the checkpoint a session was resumed from. */
  get residentFrom(): number {
    return this.#log.base
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

  /** The seqs of the stored events this build does not know, ascending. */
  opaqueSeqs(): number[] {
    return [...this.#opaque].sort((a, b) => a - b)
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
    if (this.#subscribers.notifying) throw appendRefused('REENTRANT_APPEND', type, this.id)
    const registration = getEventRegistration(type)
    if (!registration) throw appendRefused('EVENT_TYPE_UNREGISTERED', type, this.id)
    const opts = (options ?? {}) as AppendOptions<SessionEventType> & SurfaceFields
    const seq = this.#log.length
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
    event.data = checkData(type, seq, event.data, registration, false)
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
    return this.#projections.project(projection, this.#log, this.#isOpaque)
  }

  /**
   * Copies the prefix through `atSeq` (default: the whole log) into a new session that
   * records its lineage (`parentSession`, `seedLength`) and starts with a
   * `session/end-seed` marker. Refuses a cut inside an open turn.
   */
  fork(childId: string, atSeq?: number, options: SessionOptions = {}): Session {
    const plan = planFork(
      { header: this.#header, length: this.#log.length, clock: this.#clock, knownEventTypes: this.#known },
      atSeq,
      options,
    )
    const child = Session.create(childId, plan.header, undefined, plan.options)
    for (let i = 0; i < plan.seedLength; i++) child.#adopt(this.#log.at(i), this.#opaque.has(i))
    const open = child.#lifecycle.openTurn
    if (open !== null)
      throw forkInsideTurnError(this.#header, plan.last, open, turnBounds(this.#log, open, plan.last))
    child.append('session/end-seed', { parentSession: this.id, parentSeq: plan.last as SessionSeq })
    return child
  }

  /** Loads one stored event (seed replay). */
  #load(raw: unknown): void {
    const seq = this.#log.length
    const type = (raw as { type?: unknown } | null)?.type
    const registration = typeof type === 'string' ? getEventRegistration(type) : undefined
    if (!registration && typeof type === 'string' && !Object.hasOwn(this.#known, type)) {
      this.#log.push(opaqueEvent(this.id, raw, seq, this.#keepUnknown))
      this.#opaque.add(seq)
      this.#types.set(type, 'opaque')
      return
    }
    const event = readStored(raw, seq, this.#reading, registration)
    const advance = this.#invariants.check(event, registration, true)
    this.#commit(event, true)
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
    const interpreted = this.#opaque.size === 0 || !this.#opaque.has(seq)
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
    this.#log.push(event)
    if (!this.#types.has(type)) this.#types.set(type, interpretationOf(type, this.#known))
    if (isSurface) {
      const message = (data as { message: Message }).message
      if (replaced) this.#surface.replace(replaced, seq, message)
      else this.#surface.append(seq, message)
    }
  }
}
