// Both languages: Chinese descriptions live in a translations file keyed to the English text
// they were written from; missing ones are listed and marked, stale ones fail verify.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { CATALOG_ZH, generateCatalog } from '../generate.js'
import { generateAndWrite } from '../release.js'
import { sourceOf, TRANSLATIONS_ZH } from '../translations.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, makeRepo, write } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const CORE = 'packages/core/session/src/events.ts'

function translated(): string {
  const root = makeRepo('mini')
  const model = generateCatalog({ root }).model
  write(
    root,
    TRANSLATIONS_ZH,
    JSON.stringify({
      events: { 'turn/start': { source: sourceOf(model, 'event:turn/start'), zh: '一个轮次开始。' } },
      types: {},
    }),
  )
  generateAndWrite({ root, snapshot: true })
  return root
}

describe('Chinese descriptions', () => {
  it('a translation is rendered in the zh catalog; a missing one is listed and marked', () => {
    const root = translated()
    const zh = readFileSync(join(root, CATALOG_ZH), 'utf8')
    expect(zh).toContain('说明：一个轮次开始。')
    expect(zh).toContain('尚无中文说明')
    const gen = generateCatalog({ root })
    expect(gen.translations.missing).toContain('event:tool/call')
    expect(gen.translations.missing).not.toContain('event:turn/start')
    expect(verifyCatalog({ root }).ok).toBe(true)
  })

  it('verify fails when the English source of a translation changed', () => {
    const root = translated()
    edit(root, CORE, (t) => t.replace('/** A turn began. @example', '/** A turn began (edited). @example'))
    generateAndWrite({ root })
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.translationProblems.join('\n')).toContain(
      'event:turn/start was written for an English description that has changed',
    )
    expect(readFileSync(join(root, CATALOG_ZH), 'utf8')).not.toContain('说明：一个轮次开始。')
  })
})
