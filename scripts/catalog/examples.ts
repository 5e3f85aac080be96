// Every event's `@example` is checked at gen: it is required on every catalog event (a
// snapshot freezes them into the golden log), it must be JSON, and it must pass the event's
// own validator — the zod expressions zod-exprs.ts writes into `events.generated.ts`,
// evaluated here, so the check and the file cannot disagree.
import { boundIssues, errorMessage } from '@keel/base'
import { z } from 'zod'
// The runtime helpers the generated validators call, from their own module (not the session
// package's index: that would run the registry and the generated modules gen may be fixing).
import { uniqueBy, uniqueItems } from '../../packages/core/session/src/validators.js'
import type { CatalogProblem } from './errors.js'
import type { EventModel, SourceModel } from './model.js'
import { validatorSource } from './zod-exprs.js'

type Validator = { safeParse(value: unknown): { success: boolean; error?: { issues: ZodIssue[] } } }
interface ZodIssue {
  path: PropertyKey[]
  message: string
}

const HELPERS: Record<string, unknown> = { uniqueBy, uniqueItems }

/** The validators of `events` (or output lines), evaluated from the generated expressions (one owner at a time). */
export function compileValidators(
  model: Pick<SourceModel, 'canonical'>,
  events: ReadonlyArray<Pick<EventModel, 'type' | 'rootClass'>>,
): Map<string, Validator> {
  const source = validatorSource(
    model,
    events.map((e) => e.rootClass),
  )
  const helperNames = [...source.helpers].sort()
  const body = [
    ...source.defs.map((d) => `const ${d.name} = ${d.body}`),
    `return [${events.map((e) => source.exprs.get(e.rootClass)!).join(', ')}]`,
  ].join('\n')
  // The expressions are generated from the type graph, never from input text.
  const make = new Function('z', ...helperNames, body) as (...args: unknown[]) => Validator[]
  const validators = make(z, ...helperNames.map((h) => HELPERS[h]))
  return new Map(events.map((e, i) => [e.type, validators[i]!]))
}

function issueText(issues: readonly ZodIssue[]): string {
  return boundIssues(issues.slice(0, 3), 'data')
    .issues.map((i) => `${i.path}: ${i.message}`)
    .join('; ')
}

/**
 * Problems of the examples: a catalog event without one, an example that is not JSON or that
 * its event's validator refuses. Events of test fixture packages need none, but one they have
 * is checked.
 */
export function exampleProblems(model: SourceModel): CatalogProblem[] {
  const problems: CatalogProblem[] = []
  const fail = (e: EventModel, message: string) =>
    problems.push({
      code: 'EVENT_EXAMPLE_INVALID',
      loc: e.loc,
      event: e.type,
      message: `${e.loc}: ${message}`,
    })
  const byOwner = new Map<string, EventModel[]>()
  for (const e of [...model.events, ...model.fixtureEvents])
    byOwner.set(e.owner, [...(byOwner.get(e.owner) ?? []), e])
  const fixture = new Set(model.fixtureEvents)
  for (const events of byOwner.values()) {
    const validators = compileValidators(model, events)
    for (const e of events) {
      if (e.example === undefined) {
        if (!fixture.has(e))
          fail(
            e,
            `event '${e.type}' has no @example; write one valid payload as JSON in its JSDoc (\`@example {"…": …}\`): a format snapshot freezes every example into the golden log`,
          )
        continue
      }
      let value: unknown
      try {
        value = JSON.parse(e.example)
      } catch (error) {
        fail(e, `the @example of '${e.type}' is not JSON (${errorMessage(error)}): ${e.example.slice(0, 60)}`)
        continue
      }
      const result = validators.get(e.type)!.safeParse(value)
      if (!result.success)
        fail(
          e,
          `the @example of '${e.type}' fails its own validator: ${issueText(result.error?.issues ?? [])}`,
        )
    }
  }
  return problems
}
