// Golden logs: for every snapshotted format version, one committed session log holding every
// event type of that version (`docs/persistence/golden/v<N>/session.jsonl`: the logical
// header on the first line, then the events). Written with the snapshot, from each event's
// JSDoc `@example` payload (checked at gen), and sealed into it: verify loads every golden
// log with the code that runs, through the migration chain (runtime.ts).

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorMessage } from '@keel/base'
import { CatalogError, type CatalogProblem } from './errors.js'
import type { SourceModel } from './model.js'

export const GOLDEN_DIR = 'docs/persistence/golden'

export const goldenPath = (version: number) => `${GOLDEN_DIR}/v${version}/session.jsonl`

/**
 * Where each core event goes so that the log obeys the session's rules: one turn with one
 * step holding an attempt, a retry, an answer with a tool call and its result. Every other
 * event follows, in type order, outside the turn.
 */
const ORDER = [
  'system/message',
  'session/end-seed',
  'turn/start',
  'user/message',
  'step/start',
  'assistant/attempt',
  'llm/retry',
  'assistant/message',
  'tool/call',
  'tool/result',
  'step/end',
  'turn/end',
  'developer/message',
]

const T0 = 1_700_000_000_000

/** The golden log of the model's version, from the `@example` payloads. Throws when one is missing. */
export function renderGolden(model: SourceModel): string {
  const problems: CatalogProblem[] = []
  const payloads = new Map<string, unknown>()
  for (const e of model.events) {
    if (e.example === undefined) {
      problems.push({
        code: 'EVENT_WITHOUT_JSDOC',
        loc: e.loc,
        event: e.type,
        message: `${e.loc}: event '${e.type}' has no @example; a snapshot freezes a golden log holding every event, from each event's @example payload (JSON)`,
      })
      continue
    }
    try {
      payloads.set(e.type, JSON.parse(e.example))
    } catch (error) {
      problems.push({
        code: 'EVENT_WITHOUT_JSDOC',
        loc: e.loc,
        event: e.type,
        message: `${e.loc}: the @example of '${e.type}' is not JSON (${errorMessage(error)})`,
      })
    }
  }
  if (problems.length > 0) throw new CatalogError(problems)
  const rank = (t: string) => (ORDER.includes(t) ? ORDER.indexOf(t) : ORDER.length)
  const types = [...payloads.keys()].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
  const header = {
    version: model.formatVersion,
    id: `golden-v${model.formatVersion}`,
    createdAt: T0,
    parentSession: 'golden-parent',
    seedLength: 1,
  }
  const lines = [JSON.stringify(header)]
  types.forEach((type, seq) => {
    lines.push(JSON.stringify({ type, seq, time: T0 + seq * 1000, data: payloads.get(type) }))
  })
  return `${lines.join('\n')}\n`
}

/** The types a golden log holds. */
export function goldenTypes(root: string, version: number): string[] {
  const text = readFileSync(join(root, goldenPath(version)), 'utf8')
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => (JSON.parse(l) as { type: string }).type)
}
