// The files `pnpm new-plugin` writes: a plugin package with one event and one tool named by
// the author, its projection, a test against the scripted server, and the preset and script
// that drive it through `keel`. Two layouts: inside this repository (`packages/<group>/<name>`,
// `@keel/<name>`, workspace dependencies, a changeset) or outside it (`--dir`, any package
// name, the Keel packages as peer dependencies linked to this checkout for development).

/** What the author chose, and where the package goes. */
export interface PluginSpec {
  /** Short kebab name: the event prefix and the file names (`notes`). */
  name: string
  /** The package name (`@keel/notes`, `@acme/notes`). */
  pkg: string
  /** The event's second segment (`added` → `notes/added`). */
  event: string
  /** The tool's name (`notes_added`). */
  tool: string
  /** Inside the repository: the workspace layout. Outside: the Keel checkout's packages, for `link:` dev dependencies. */
  layout: { kind: 'workspace'; dir: string } | { kind: 'outside'; keel: KeelCheckout }
}

/** The Keel checkout an outside package develops against: where its packages are, relative to the package. */
export interface KeelCheckout {
  /** `@keel/agent` → `link:` path relative to the new package, and the package's version. */
  packages: Record<string, { link: string; version: string }>
  /** `typescript`, `vitest`, `@types/node` → `link:` path (the checkout's own). */
  tools: Record<string, string>
  /** The checkout's zod version (plugins use the same). */
  zod: string
  /** The checkout's compiler options (the new package's tsconfig holds a copy). */
  compilerOptions: Record<string, unknown>
}

const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const pascal = (s: string) => camel(s)[0]!.toUpperCase() + camel(s).slice(1)

/** The runtime Keel packages a plugin imports, and the ones its test uses. */
const RUNTIME = ['@keel/agent', '@keel/session', '@keel/tools']
const TEST = ['@keel/deepseek', '@keel/scripted-server', '@keel/store']

function manifest(spec: PluginSpec, zod: string): string {
  const base = {
    name: spec.pkg,
    version: '0.1.0',
    description: `TODO: what ${spec.pkg} owns, in one line.`,
    type: 'module',
    license: 'MIT',
    exports: { '.': { types: './src/index.ts', default: './src/index.ts' } },
    publishConfig: { exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } },
    files: ['dist', 'src', 'README.md'],
  }
  if (spec.layout.kind === 'workspace') {
    const ws = (names: string[]) => Object.fromEntries(names.map((n) => [n, 'workspace:*']))
    return `${JSON.stringify(
      {
        ...base,
        scripts: {
          typecheck: 'tsc -p tsconfig.json',
          build: 'tsc -p tsconfig.build.json',
          lint: 'biome check .',
          test: `cd ../../.. && vitest run ${spec.layout.dir}`,
        },
        dependencies: { ...ws(RUNTIME), zod },
        devDependencies: ws(TEST),
      },
      null,
      2,
    )}\n`
  }
  const keel = spec.layout.keel
  const version = (n: string) => `^${keel.packages[n]!.version}`
  const link = (n: string) => `link:${keel.packages[n]!.link}`
  return `${JSON.stringify(
    {
      ...base,
      scripts: { typecheck: 'tsc -p tsconfig.json', build: 'tsc -p tsconfig.build.json', test: 'vitest run' },
      // Keel gives the plugin its packages: one @keel/session (one event registry) for all.
      peerDependencies: Object.fromEntries(RUNTIME.map((n) => [n, version(n)])),
      dependencies: { zod },
      // For development against a Keel checkout; published Keel: use versions instead of link:.
      devDependencies: Object.fromEntries([
        ...[...RUNTIME, ...TEST].map((n) => [n, link(n)]),
        ...Object.entries(keel.tools).map(([n, at]) => [n, `link:${at}`]),
      ]),
    },
    null,
    2,
  )}\n`
}

function tsconfigs(spec: PluginSpec): Record<string, string> {
  const build =
    '{\n  "extends": "./tsconfig.json",\n  "compilerOptions": { "noEmit": false, "outDir": "dist", "rootDir": "src" },\n  "include": ["src"]\n}\n'
  if (spec.layout.kind === 'workspace')
    return {
      'tsconfig.json': '{\n  "extends": "../../../tsconfig.base.json",\n  "include": ["src", "tests"]\n}\n',
      'tsconfig.build.json': build,
    }
  const options = spec.layout.keel.compilerOptions
  return {
    'tsconfig.json': `${JSON.stringify({ compilerOptions: options, include: ['src', 'tests'] }, null, 2)}\n`,
    'tsconfig.build.json': build,
  }
}

/** The package's files, relative to its directory. */
export function pluginFiles(spec: PluginSpec, zod: string): Record<string, string> {
  const { name, pkg, tool } = spec
  const type = `${name}/${spec.event}`
  const c = camel(name)
  const payload = `${pascal(name)}${pascal(spec.event)}`
  const schema = `${payload[0]!.toLowerCase()}${payload.slice(1)}Schema`
  const toolFn = `${camel(tool.replace(/_/g, '-'))}Tool`
  return {
    'package.json': manifest(spec, zod),
    ...tsconfigs(spec),
    'README.md': `# ${pkg}

TODO: what this plugin owns and why it is shaped this way.

## Events

| event | meaning |
|---|---|
| \`${type}\` | TODO (one \`${payload}\`) |

## Tools

- \`${tool}\`: records one \`${type}\`.

## Use it in \`keel\`

Install the package where \`keel\` finds it (the project's \`node_modules\`, or
\`$KEEL_HOME/node_modules\`) and copy \`examples/preset.json\` to \`<project>/.keel/presets/\`
(or \`$KEEL_HOME/presets/\`). To drive it without a model key, from the Keel checkout:

\`\`\`sh
pnpm scripted-server --script <this package>/examples/script.json   # prints the base URL
keel --preset ${name} --base-url <that URL> -p "remember to buy milk"
\`\`\`
`,
    'src/events.ts': `// The events ${pkg} owns. Declared once, here: \`pnpm gen-persistence-catalog\` generates
// their validators into events.generated.ts (registered on import) — never write a schema.
import './events.generated.js'

/** What one \`${type}\` records. */
export interface ${payload} {
  /**
   * TODO: what the field means. Refinements are JSDoc tags on their own line (see the
   * persistence catalog guide): this one refuses an empty text.
   * @minLength 1
   */
  text: string
}

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * TODO: the contract of this event — what it records, when it is appended, and how a
     * reader folds it (here: one more entry; the projection keeps the count and the latest).
     * @example {"text":"buy milk"}
     */
    '${type}': ${payload}
  }
}
`,
    [`src/${name}.ts`]: `import { type Projection, registerProjection } from '@keel/session'
import type { ${payload} } from './events.js'

/** The plugin's state, folded from the log (resume, fork and compaction keep it). */
export interface ${pascal(name)}State {
  /** How many \`${type}\` events the log holds. */
  count: number
  /** The latest one, or null before the first. */
  latest: ${payload} | null
}

/**
 * Folds \`${type}\`: one more, and the latest wins. Registered, so checkpoints keep its
 * state (plain JSON); bump \`version\` whenever the fold or its state changes.
 */
export const ${c}Projection: Projection<${pascal(name)}State> = registerProjection<${pascal(name)}State>({
  name: '${pkg}',
  init: () => ({ count: 0, latest: null }),
  apply: (state, event) => (event.type === '${type}' ? { count: state.count + 1, latest: event.data } : state),
  checkpoint: { version: 1 },
})
`,
    'src/tool.ts': `import type { Session } from '@keel/session'
import { defineTool, type Tool } from '@keel/tools'
import { ${schema} } from './events.generated.js'
import type { ${payload} } from './events.js'

/** \`${tool}\`: the model records one \`${type}\` (its input is the event's payload, validated as such). */
export function ${toolFn}(session: Session, onAdded: (entry: ${payload}) => void): Tool<${payload}> {
  return defineTool({
    name: '${tool}',
    description: 'TODO: what the tool does and when the model should call it. Records one entry.',
    inputSchema: ${schema},
    annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: false },
    async call(input) {
      session.append('${type}', input)
      onAdded(input)
      return 'Recorded.'
    },
  })
}
`,
    'src/plugin.ts': `import { definePlugin } from '@keel/agent'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import { ${toolFn} } from './tool.js'

/** The config a preset gives ${pkg} (plain JSON, validated when the preset loads). */
export const ${c}ConfigSchema = z.strictObject({
  /** Show each new entry to the user. */
  announce: z.boolean().default(true),
})

/** ${pkg}: the \`${tool}\` tool, which records \`${type}\`. */
export const ${c}Plugin = definePlugin({
  name: '${pkg}',
  config: ${c}ConfigSchema,
  events: ownedEventTypes,
  setup(ctx) {
    ctx.registerTool(
      ${toolFn}(ctx.session, (entry) => {
        if (ctx.config.announce) ctx.display('${name}', \`recorded: \${entry.text}\`)
      }),
    )
  },
})
`,
    'src/index.ts': `import './events.js'
import { ${c}Plugin } from './plugin.js'

export type { ${payload} } from './events.js'
export { ownedEventTypes as ${c}EventTypes, ${schema} } from './events.generated.js'
export { ${c}ConfigSchema, ${c}Plugin } from './plugin.js'
export { type ${pascal(name)}State, ${c}Projection } from './${name}.js'

/** The plugin, as \`keel\` loads it for a preset's \`{ "use": "${pkg}" }\`. */
export default ${c}Plugin
`,
    [`tests/${name}.test.ts`]: `import { createAgent } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { startScriptedServer } from '@keel/scripted-server'
import { MemoryStore } from '@keel/store'
import { describe, expect, it } from 'vitest'
import ${c}Plugin, { ${c}Projection } from '../src/index.js'

/** One agent turn with the plugin against a scripted model that calls \`${tool}\` with \`args\`. */
async function turn(args: unknown) {
  const server = await startScriptedServer({
    script: [{ toolCalls: [{ name: '${tool}', arguments: args as Record<string, unknown> }] }, { text: 'Done.' }],
  })
  const store = new MemoryStore()
  const handle = await store.create()
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, env: {} }),
    session: handle,
    cwd: process.cwd(),
    plugins: [${c}Plugin],
  })
  try {
    const result = await agent.send('Please record it.')
    return { result, session: await store.load(handle.session.id) }
  } finally {
    await agent.close()
    await server.close()
  }
}

describe('${pkg}', () => {
  it('records ${type} when the model calls ${tool}, and the log folds back to it', async () => {
    const { result, session } = await turn({ text: 'buy milk' })
    expect(result.reason).toBe('completed')
    expect(session.events.filter((e) => e.type === '${type}').map((e) => e.data)).toEqual([{ text: 'buy milk' }])
    expect(session.project(${c}Projection)).toEqual({ count: 1, latest: { text: 'buy milk' } })
  })

  it('refuses input its event would refuse (the @minLength 1 tag), recording nothing', async () => {
    const { result, session } = await turn({ text: '' })
    expect(result.reason).toBe('completed')
    const refused = session.events.find((e) => e.type === 'tool/result')
    expect(refused?.data).toMatchObject({ errorCode: 'TOOL_INPUT_INVALID' })
    expect(session.project(${c}Projection).count).toBe(0)
  })
})
`,
    'examples/preset.json': `${JSON.stringify(
      {
        id: name,
        description: `${pkg} and the file tools`,
        plugins: [{ use: pkg, config: { announce: true } }],
        tools: ['fs-read'],
      },
      null,
      2,
    )}\n`,
    'examples/script.json': `${JSON.stringify(
      [{ toolCalls: [{ name: tool, arguments: { text: 'buy milk' } }] }, { text: 'Recorded: buy milk.' }],
      null,
      2,
    )}\n`,
  }
}
