// Types declared in a package without events (the model's messages in @keel/llm) get their
// validators generated once, into that package, and every generated event module imports
// them from there: one validator per type, none written by hand.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { generateCatalog } from '../generate.js'
import { generateAndWrite } from '../release.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, makeRepo, problemsOf, write } from './helpers.js'

afterAll(cleanRepos)
vi.setConfig({ testTimeout: 120_000 })

const MESSAGES = `/** A message of the model. */
export interface Message {
  role: 'user' | 'assistant'
  /** @minLength 1 */
  text: string
}
`

/** The mini fixture plus a package without events whose type a todo event reaches. */
function repo(): string {
  const root = makeRepo('mini')
  write(root, 'packages/llm/llm/package.json', '{ "name": "@keel/llm", "private": true, "type": "module" }\n')
  write(root, 'packages/llm/llm/src/messages.ts', MESSAGES)
  write(root, 'packages/llm/llm/src/index.ts', "export type { Message } from './messages.js'\n")
  edit(root, 'packages/todo/todo/src/events.ts', (t) =>
    t
      .replace(
        "import type {} from '@keel/session'",
        "import type {} from '@keel/session'\nimport type { Message } from '@keel/llm'",
      )
      .replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; said?: Message }"),
  )
  return root
}

describe('validators of a package without events', () => {
  it('are refused until the package re-exports them and the importer depends on it', () => {
    const problems = problemsOf(repo())
    expect(problems).toContain(
      "packages/llm/llm/src/index.ts:1: @keel/llm declares types that persisted events reach; its index must re-export their generated validators: export * from './schemas.generated.js'",
    )
    expect(problems).toContain(
      'packages/todo/todo/package.json:1: the events of @keel/todo reach types declared in @keel/llm (messageSchema); add @keel/llm to its dependencies',
    )
  })

  it('are generated once, in the declaring package, and imported by the event modules', () => {
    const root = repo()
    write(
      root,
      'packages/llm/llm/src/index.ts',
      "export type { Message } from './messages.js'\nexport * from './schemas.generated.js'\n",
    )
    write(
      root,
      'packages/todo/todo/package.json',
      '{ "name": "@keel/todo", "private": true, "type": "module", "dependencies": { "@keel/llm": "workspace:*" } }\n',
    )
    const files = generateCatalog({ root }).files
    const shared = files['packages/llm/llm/src/schemas.generated.ts']!
    expect(shared).toContain(
      'export const messageSchema = z.strictObject({ role: z.enum(["assistant", "user"]), text: z.string().min(1) })',
    )
    const todo = files['packages/todo/todo/src/events.generated.ts']!
    expect(todo).toContain("import { messageSchema } from '@keel/llm'")
    expect(todo).not.toContain('export const messageSchema')
    expect(todo).toContain('said: messageSchema.optional()')
    // and the code that runs agrees: the golden log loads through the real modules
    generateAndWrite({ root, snapshot: true })
    const result = verifyCatalog({ root })
    expect(result.messages.join('\n')).toContain('persistence catalog up to date')
    expect(readFileSync(join(root, 'packages/llm/llm/src/schemas.generated.ts'), 'utf8')).toBe(shared)
  })
})
