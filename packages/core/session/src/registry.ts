import { KeelError } from '@keel/base'
import { z } from 'zod'
import type { SessionEventMap } from './events.js'
import type { FoldCheckpoint } from './projections.js'
import { compileCheck, type SchemaCheck } from './schema-check.js'
import type { SessionEventType, SessionId, SessionSeq } from './types.js'

/** Runtime schema of {@link SessionId}: 1–128 characters of `[A-Za-z0-9._-]`, not starting with `.`. */
export const sessionIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/,
    'a session id is 1–128 of A-Z a-z 0-9 . _ - (no leading dot)',
  ) as unknown as z.ZodType<SessionId>

/** Runtime schema of {@link SessionSeq}: a non-negative integer. */
export const sessionSeqSchema = z.number().int().nonnegative() as unknown as z.ZodType<SessionSeq>

type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/**
 * Resolves to the schema type when its output is exactly the event's payload type
 * (mutually assignable), and to an explanatory string type otherwise — so a schema that
 * drifts from its `SessionEventMap` entry fails `tsc` at the registration site.
 */
export type CheckedEventSchema<K, S> = K extends SessionEventType
  ? S extends z.ZodType<infer Out>
    ? MutuallyAssignable<Out, SessionEventMap[K]> extends true
      ? S
      : `schema of '${K}' does not match SessionEventMap['${K}']`
    : `the value for '${K}' is not a zod schema`
  : `'${K & string}' is not a key of SessionEventMap (missing declaration merge?)`

/** The result of one step of an {@link EventInvariant}: the next state, or why the event is refused. */
export type InvariantStep<State> =
  | { ok: true; state: State }
  /** `code`: the owner's own error code for the violation, kept in the session error's details. */
  | { ok: false; reason: string; code?: string }

/**
 * An invariant that spans events of one package (ids unique across the log, a transition
 * valid for the state so far). It is a fold over the package's events in log order, run on
 * every append and on every stored event when a session is loaded, so a log that breaks it
 * is refused at load — not only when some projection happens to be read.
 */
export interface EventInvariant<State = unknown> {
  init(): State
  /** Checks `event` against the state folded so far. Must not mutate `state`. */
  check(state: State, event: { type: string; seq: number; data: unknown }): InvariantStep<State>
  /**
   * Present when the fold's state can be kept in a session checkpoint (see
   * {@link FoldCheckpoint}). A log that uses an invariant without it is always replayed in
   * full on load.
   */
  readonly checkpoint?: FoldCheckpoint<State>
}

/** One registered event type. */
export interface EventRegistration {
  readonly type: SessionEventType
  /** The npm package that declares and owns the event. */
  readonly owner: string
  readonly schema: z.ZodType<unknown>
  /** `schema` as a yes/no check that allocates nothing on success (the hot path; `schema` gives the message). */
  readonly check: SchemaCheck
  /** The owner's invariant fold, shared by all of its event types. */
  readonly invariant?: EventInvariant<unknown>
}

/** Event types are `owner/verb`: lower-case kebab segments separated by `/`. */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\/[a-z][a-z0-9]*(?:-[a-z0-9]+)*)+$/

const registry = new Map<string, EventRegistration>()

/** Thrown when two packages (or two calls) register the same event type differently. */
export class EventRegistrationError extends KeelError<
  'EVENT_ALREADY_REGISTERED' | 'EVENT_TYPE_NAME_INVALID'
> {}

/**
 * Registers the runtime validators of the events a package owns. The package's generated
 * `src/events.generated.ts` calls it (see `pnpm gen-persistence-catalog`); each validator is
 * checked at compile time against its `SessionEventMap` entry. Appending or loading an event
 * validates its `data` with the validator registered here, then runs the owner's optional
 * `invariant` fold.
 */
export function registerEvents<
  const S extends { [K in keyof S]: CheckedEventSchema<K, S[K]> },
  State = unknown,
>(owner: string, schemas: S, options: { invariant?: EventInvariant<State> } = {}): void {
  const entries = Object.entries(schemas) as Array<[SessionEventType, z.ZodType<unknown>]>
  for (const [type] of entries) {
    if (!EVENT_TYPE_PATTERN.test(type)) {
      throw new EventRegistrationError(
        'EVENT_TYPE_NAME_INVALID',
        `${owner} registers event type '${type}': event types are 'owner/verb', lower-case kebab segments separated by '/' (e.g. 'todo/write')`,
        { type, owner },
      )
    }
  }
  const invariant = options.invariant as EventInvariant<unknown> | undefined
  for (const [type, schema] of entries) {
    const existing = registry.get(type)
    if (existing) {
      if (existing.owner === owner && existing.schema === schema) continue
      throw new EventRegistrationError(
        'EVENT_ALREADY_REGISTERED',
        `event type '${type}' is already registered by ${existing.owner}; ${owner} cannot register it again`,
        { type, owner, existingOwner: existing.owner },
      )
    }
    registry.set(
      type,
      Object.freeze({
        type,
        owner,
        schema,
        check: compileCheck(schema),
        ...(invariant ? { invariant } : {}),
      }),
    )
  }
}

/** The registration of `type`, or undefined when no loaded package registered it. */
export function getEventRegistration(type: string): EventRegistration | undefined {
  return registry.get(type)
}

/** Every registered event type, in registration order. */
export function registeredEventTypes(): EventRegistration[] {
  return [...registry.values()]
}

/** The invariant fold registered by `owner`, if any. */
export function invariantOf(owner: string): EventInvariant<unknown> | undefined {
  for (const registration of registry.values()) {
    if (registration.owner === owner && registration.invariant) return registration.invariant
  }
  return undefined
}
