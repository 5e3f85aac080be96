// `pnpm new-plugin <name> [--group <group>] [--root <dir>] [--no-gen]`: scaffolds an
// event-owning plugin package shaped like @keel/todo — package.json, tsconfigs, README,
// src/index.ts, src/events.ts (the declaration merge: the only place an event is written),
// src/<name>.ts (a projection), tests/<name>.test.ts — plus a changeset, then runs the
// persistence catalog generator, which writes src/events.generated.ts (the validators,
// registered on import) and the catalog entries. Then: pnpm install, write the plugin.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorMessage } from '@keel/base'
import { CatalogError } from './catalog/errors.js'
import { generateAndWrite } from './catalog/release.js'

/** The files of a new plugin package, relative to the repository root. */
export function pluginFiles(name: string, group: string): Record<string, string> {
  const dir = `packages/${group}/${name}`
  const camel = name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
  const pascal = camel[0]!.toUpperCase() + camel.slice(1)
  const event = `${name}/change`
  return {
    [`${dir}/package.json`]: `${JSON.stringify(
      {
        name: `@keel/${name}`,
        version: '0.0.0',
        description: `TODO: what @keel/${name} owns, in one line.`,
        type: 'module',
        license: 'MIT',
        exports: { '.': { types: './src/index.ts', default: './src/index.ts' } },
        publishConfig: { exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } },
        files: ['dist', 'src', 'README.md'],
        scripts: {
          typecheck: 'tsc -p tsconfig.json',
          build: 'tsc -p tsconfig.build.json',
          lint: 'biome check .',
          test: `cd ../../.. && vitest run ${dir}`,
        },
        dependencies: { '@keel/session': 'workspace:*', zod: '4.6.7' },
      },
      null,
      2,
    )}\n`,
    [`${dir}/tsconfig.json`]: `{\n  "extends": "../../../tsconfig.base.json",\n  "include": ["src", "tests"]\n}\n`,
    [`${dir}/tsconfig.build.json`]:
      '{\n  "extends": "./tsconfig.json",\n  "compilerOptions": { "noEmit": false, "outDir": "dist", "rootDir": "src" },\n  "include": ["src"]\n}\n',
    [`${dir}/README.md`]: `# @keel/${name}\n\nTODO: what this plugin owns and why it is shaped this way.\n\n## Events\n\n| event | surface | meaning |\n|---|---|---|\n| \`${event}\` | log-only | TODO |\n\n## Tools\n\nNone yet.\n`,
    [`${dir}/src/index.ts`]: `import './events.js'\n\nexport { ownedEventTypes as ${camel}EventTypes } from './events.generated.js'\nexport type { ${pascal}State } from './${name}.js'\nexport { ${camel}Projection } from './${name}.js'\n`,
    [`${dir}/src/events.ts`]: `// The events @keel/${name} owns. Declared once, here: \`pnpm gen-persistence-catalog\` generates
// their validators into events.generated.ts (registered on import) and the catalog entries.
import './events.generated.js'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * TODO: the contract of this event — what it records, when it is appended, and how a
     * reader folds it (whole value, latest wins; or a strictly validated transition).
     * @example {"value":"hello"}
     */
    '${event}': {
      /**
       * The new value. Refinements are JSDoc tags (see docs/guides/persistence-catalog.md).
       * @minLength 1
       */
      value: string
    }
  }
}
`,
    [`${dir}/src/${name}.ts`]: `import { type Projection, registerProjection } from '@keel/session'

/** The plugin's state, folded from the log. */
export interface ${pascal}State {
  /** The latest value written, or null before the first \`${event}\`. */
  value: string | null
}

/**
 * Folds \`${event}\` events: the latest value wins. Registered, so checkpoints keep its
 * state (plain JSON); bump \`version\` whenever the fold or its state changes.
 */
export const ${camel}Projection: Projection<${pascal}State> = registerProjection<${pascal}State>({
  name: '${name}',
  init: () => ({ value: null }),
  apply: (state, event) => (event.type === '${event}' ? { value: event.data.value } : state),
  checkpoint: { version: 1 },
})
`,
    [`${dir}/tests/${name}.test.ts`]: `import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { ${camel}Projection } from '../src/index.js'

describe('${name}', () => {
  it('folds the latest value and survives a reload', () => {
    const session = Session.create('t')
    expect(session.project(${camel}Projection).value).toBeNull()
    session.append('${event}', { value: 'a' })
    session.append('${event}', { value: 'b' })
    expect(session.project(${camel}Projection).value).toBe('b')
    const reloaded = Session.create('t', session.header, JSON.parse(JSON.stringify(session.events)))
    expect(reloaded.project(${camel}Projection).value).toBe('b')
  })

  it('refuses data its generated validator rejects (the @minLength 1 tag)', () => {
    const session = Session.create('t')
    expect(() => session.append('${event}', { value: '' })).toThrow(expect.objectContaining({ code: 'EVENT_DATA_INVALID' }))
    expect(session.nextSeq).toBe(0)
  })
})
`,
    [`.changeset/${name}-initial.md`]: `---\n'@keel/${name}': minor\n---\n\nFirst release of @keel/${name}.\n`,
  }
}

function main(argv: string[]): number {
  const args = [...argv]
  const take = (flag: string): string | undefined => {
    const i = args.indexOf(flag)
    if (i < 0) return undefined
    const value = args[i + 1]
    args.splice(i, 2)
    return value
  }
  const noGen = args.includes('--no-gen')
  if (noGen) args.splice(args.indexOf('--no-gen'), 1)
  const group = take('--group')
  const root = resolve(take('--root') ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  const name = args[0]
  if (!name || !/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) {
    console.error(
      'usage: pnpm new-plugin <name> [--group <group>]\n  <name>: lower-case kebab-case, e.g. "notes"',
    )
    return 2
  }
  const folder = group ?? name
  if (!/^[a-z][a-z0-9-]*$/.test(folder)) {
    console.error(`--group ${JSON.stringify(folder)} must be lower-case kebab-case`)
    return 2
  }
  const dir = join(root, 'packages', folder, name)
  if (existsSync(dir)) {
    console.error(`${relative(root, dir)} already exists; pick another name`)
    return 1
  }
  for (const [path, text] of Object.entries(pluginFiles(name, folder))) {
    const target = join(root, path)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, text)
    console.log(`created ${path}`)
  }
  if (!noGen) {
    try {
      const { lines, history } = generateAndWrite({ root })
      for (const l of lines) console.log(l)
      for (const p of history.problems) console.log(`  ${p}`)
    } catch (error) {
      const problems =
        error instanceof CatalogError ? error.problems.map((p) => p.message) : [errorMessage(error)]
      console.error(
        `the package was created, but the catalog could not be generated:\n  ${problems.join('\n  ')}`,
      )
      return 1
    }
  }
  console.log(
    `\nnext: pnpm install; edit src/events.ts (the event's JSDoc is rendered into the catalog, its tags refine the validator) and run pnpm gen-persistence-catalog after every change; record the new event with pnpm gen-persistence-catalog --record "<why>"`,
  )
  return 0
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2))
}
