import { KeelError } from '@keel/base'
import { z } from 'zod'
import type { SessionEventMap } from './events.js'
import type { SessionEventType, SessionId, SessionSeq } from './types.js'

/** Runtime schema of {@link SessionId}: 1–128 characters of `[A-Za-z0-9._-]`, not starting with `.`. */
export const sessionIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/,
    'a session id is 1–128 of A-Z a-z 0-9 . _ - (no leading dot)',
  ) as unknown as z.ZodType<SessionId>

/**
 * Runtime schema of {@link SessionHeader}, mirroring its declaration field by field (a
 * generated validator replaces it later). Unknown fields are left alone.
 */
export const sessionHeaderSchema = z.object({
  version: z.number().int().positive(),
  id: sessionIdSchema,
  createdAt: z.number().finite().nonnegative(),
  cwd: z.string().optional(),
  parentSession: sessionIdSchema.optional(),
  seedLength: z.number().int().nonnegative().optional(),
  agentPreset: z.string().optional(),
  title: z.string().optional(),
})

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

/** One registered event type. */
export interface EventRegistration {
  readonly type: SessionEventType
  /** The npm package that declares and owns the event. */
  readonly owner: string
  readonly schema: z.ZodType<unknown>
}

const registry = new Map<string, EventRegistration>()

/** Thrown when two packages (or two calls) register the same event type differently. */
export class EventRegistrationError extends KeelError<'EVENT_ALREADY_REGISTERED'> {}

/**
 * Registers the runtime schemas of the events a package owns. Call it once, at module
 * load, from the package's `src/events.ts`, next to the declaration merge. Each schema is
 * checked at compile time against its `SessionEventMap` entry. Appending or loading an
 * event validates its `data` with the schema registered here.
 */
export function registerEvents<const S extends { [K in keyof S]: CheckedEventSchema<K, S[K]> }>(
  owner: string,
  schemas: S,
): void {
  for (const [type, schema] of Object.entries(schemas) as Array<[SessionEventType, z.ZodType<unknown>]>) {
    const existing = registry.get(type)
    if (existing) {
      if (existing.owner === owner && existing.schema === schema) continue
      throw new EventRegistrationError(
        'EVENT_ALREADY_REGISTERED',
        `event type '${type}' is already registered by ${existing.owner}; ${owner} cannot register it again`,
        { type, owner, existingOwner: existing.owner },
      )
    }
    registry.set(type, Object.freeze({ type, owner, schema }))
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
