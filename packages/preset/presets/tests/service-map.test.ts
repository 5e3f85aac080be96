import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const fixture = join(here, 'fixtures', 'service-map')
const repo = join(here, '..', '..', '..', '..')

/**
 * The compiler's errors in `compose.ts` for a program of `roots`, in this order, under the
 * repository's options (only that file is checked: the rest is `pnpm typecheck`'s).
 */
function errorsOf(roots: readonly string[]): string[] {
  const config = ts.readConfigFile(join(repo, 'tsconfig.base.json'), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, repo)
  const program = ts.createProgram(
    roots.map((r) => join(fixture, r)),
    { ...options, noEmit: true },
  )
  const compose = program.getSourceFile(join(fixture, 'compose.ts'))
  return [...program.getSyntacticDiagnostics(compose), ...program.getSemanticDiagnostics(compose)].map(
    (d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
  )
}

describe('service keys in a program that composes the shipped plugins with a user plugin', () => {
  it("every shipped key and the user's own stay declared, when the shipped plugins are read before the user's", {
    timeout: 120_000,
  }, () => {
    // Keel's plugins first, then the user's declaration: the order that lost every shipped key
    // while they augmented '@keel/agent' (a re-export) and the user '@keel/tools'.
    expect(errorsOf(['compose.ts', 'user-plugin.ts'])).toEqual([])
  })
})
