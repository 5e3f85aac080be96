// The generator's refusals: each names `path:line`, the event and the property path, and the
// CLI exits 1 with them on stderr.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CatalogError, type CatalogProblem } from '../errors.js'
import { generateCatalog } from '../generate.js'
import { cleanRepos, FIXTURES, makeRepo } from './helpers.js'

const EVENTS = 'packages/bad/bad/src/events.ts'
let problems: readonly CatalogProblem[]
let root: string

beforeAll(() => {
  root = makeRepo('mini', 'errors')
  try {
    generateCatalog({ root })
    problems = []
  } catch (e) {
    if (!(e instanceof CatalogError)) throw e
    expect(e.code).toBe('CATALOG_SOURCE_INVALID')
    problems = e.problems
  }
})
afterAll(cleanRepos)

const find = (code: string, event?: string) => problems.filter((p) => p.code === code && p.event === event)

describe('generator errors', () => {
  it('an event without JSDoc', () => {
    const [p] = find('EVENT_WITHOUT_JSDOC', 'bad/no-doc')
    expect(p?.loc).toBe(`${EVENTS}:11`)
    expect(p?.message).toMatch(/^packages\/bad\/bad\/src\/events\.ts:11: event 'bad\/no-doc' has no JSDoc/)
  })

  const nonPersistable: Array<[event: string, line: number, path: string, words: RegExp]> = [
    ['bad/function', 13, 'data.nested.onDone', /function/],
    ['bad/date', 15, 'data.at', /Date is not JSON/],
    ['bad/map', 17, 'data.byId', /Map<string, string> is not JSON/],
    ['bad/set', 19, 'data.ids', /Set<string> is not JSON/],
    ['bad/bigint', 21, 'data.big', /bigint/],
    ['bad/symbol', 23, 'data.s', /symbol/],
    ['bad/class', 25, 'data.w', /class instance Widget/],
    ['bad/undefined', 27, 'data.u', /`undefined` is not a value type/],
    ['bad/index', 29, 'data.byNumber[key]', /index key number is not a string/],
    ['bad/method', 31, 'data.m.run', /method/],
    ['bad/promise', 35, 'data.p', /Promise<string> is not JSON/],
    ['bad/object', 37, 'data.o', /`object` has no declared shape/],
  ]
  for (const [event, line, path, words] of nonPersistable) {
    it(`a non-persistable payload: ${event} at ${path}`, () => {
      const [p] = find('NON_PERSISTABLE_TYPE', event)
      expect(p, JSON.stringify(problems, null, 2)).toBeDefined()
      expect(p!.loc).toBe(`${EVENTS}:${line}`)
      expect(p!.path).toBe(path)
      expect(p!.message).toContain(`event '${event}' payload at ${path}`)
      expect(p!.message).toMatch(words)
      expect(p!.message.startsWith(`${EVENTS}:${line}: `)).toBe(true)
    })
  }

  it('the same event type declared twice names both places', () => {
    const [p] = find('DUPLICATE_EVENT_TYPE', 'turn/start')
    expect(p?.loc).toBe(`${EVENTS}:33`)
    expect(p?.message).toContain('first at packages/core/session/src/events.ts:6')
  })

  it('a merge into a misspelled module name', () => {
    const p = problems.find((x) => x.code === 'WRONG_MERGE_MODULE' && x.loc.includes('typo.ts'))
    expect(p?.loc).toBe('packages/bad/bad/src/typo.ts:2')
    expect(p?.message).toContain("'@keel/sesion'")
    expect(p?.message).toContain("declare module '@keel/session'")
  })

  it('a merge through a relative path', () => {
    const p = problems.find((x) => x.code === 'WRONG_MERGE_MODULE' && x.loc.includes('relative.ts'))
    expect(p?.loc).toBe('packages/bad/bad/src/relative.ts:2')
    expect(p?.message).toContain("'../../../core/session/src/events.js'")
  })

  it('the correct events of the same repository raise nothing', () => {
    expect(problems.some((p) => p.event === 'todo/write' || p.event === 'tool/call')).toBe(false)
    expect(problems).toHaveLength(16)
  })

  it('a repository without the session package', () => {
    const empty = makeRepo('errors')
    let code: string | undefined
    try {
      generateCatalog({ root: empty })
    } catch (e) {
      code = e instanceof CatalogError ? e.problems[0]?.code : undefined
    }
    expect(code).toBe('NO_SESSION_MODULE')
  })

  it('the CLI prints every problem with path:line on stderr and exits 1', () => {
    const cli = join(FIXTURES, '..', '..', 'cli.ts')
    const run = spawnSync(process.execPath, ['--import', 'tsx', cli, 'generate', '--root', root], {
      encoding: 'utf8',
    })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain(`${EVENTS}:15: event 'bad/date' payload at data.at`)
    expect(run.stderr).toContain('packages/bad/bad/src/typo.ts:2:')
  })
})
