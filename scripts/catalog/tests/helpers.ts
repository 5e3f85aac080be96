import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildMachineCatalog, type MachineCatalog } from '../catalog-json.js'
import { CatalogError } from '../errors.js'
import { generateCatalog } from '../generate.js'
import { buildModel } from '../model.js'
import { loadProject } from '../workspace.js'

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

const made: string[] = []

/** A temp copy of fixture mini-projects overlaid in order (never the real repository). */
export function makeRepo(...fixtures: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'keel-catalog-'))
  made.push(root)
  for (const f of fixtures) cpSync(join(FIXTURES, f), root, { recursive: true })
  return root
}

/** Removes every repository made by {@link makeRepo}. */
export function cleanRepos(): void {
  for (const r of made.splice(0)) rmSync(r, { recursive: true, force: true })
}

export function edit(root: string, rel: string, change: (text: string) => string): void {
  const abs = join(root, rel)
  const before = readFileSync(abs, 'utf8')
  const after = change(before)
  if (after === before) throw new Error(`edit of ${rel} changed nothing`)
  writeFileSync(abs, after)
}

export function write(root: string, rel: string, text: string): void {
  const abs = join(root, rel)
  mkdirSync(dirname(abs), { recursive: true })
  writeFileSync(abs, text)
}

/**
 * The machine catalog of a fixture repository from the model alone: normalization without
 * gen's rules for whole events (a required `@example`), for tests of types and digests.
 */
export function catalogOf(root: string): MachineCatalog {
  return buildMachineCatalog(buildModel(loadProject(root)))
}

/**
 * A source file merging events into `SessionEventMap`: `[type, payload type, example]` each,
 * documented, with the example as its `@example` (JSON of the given value, or the text as is).
 */
export function eventsSource(
  events: ReadonlyArray<readonly [type: string, payload: string, example: unknown]>,
  preamble = '',
): string {
  const members = events.map(([type, payload, example]) => {
    const json = typeof example === 'string' && /^[[{"]/.test(example) ? example : JSON.stringify(example)
    return `    /** The ${type} event. @example ${json} */\n    '${type}': ${payload}`
  })
  return `import type {} from '@keel/session'\n${preamble}\ndeclare module '@keel/session' {\n  interface SessionEventMap {\n${members.join('\n')}\n  }\n}\n`
}

/** The messages of the problems that stop gen on `root`, one per line; throws when gen succeeds. */
export function problemsOf(root: string): string {
  try {
    generateCatalog({ root })
  } catch (e) {
    if (e instanceof CatalogError) return e.problems.map((p) => p.message).join('\n')
    throw e
  }
  throw new Error('generation succeeded')
}
