// Plugin packages on disk for the tests: real directories with a package.json and a main
// module, their `@keel/*` and zod dependencies linked to this repository's (what `pnpm
// install` of a peer dependency would give), installed by symlink into a project's or
// $KEEL_HOME's node_modules.
import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, '..', '..', '..', '..')

/** Links `<dir>/node_modules/<name>` to `target`. */
export async function link(dir: string, name: string, target: string): Promise<void> {
  const at = join(dir, 'node_modules', name)
  await mkdir(dirname(at), { recursive: true })
  await symlink(target, at, 'dir')
}

/** A fresh temporary directory (real path). */
export async function tempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)))
}

/**
 * Writes a package: `package.json` (name, version, description, exports → src/index.ts) and
 * `src/index.ts`, with @keel/agent, @keel/session, @keel/tools and zod linked to this repository's.
 */
export async function writePackage(
  dir: string,
  manifest: Record<string, unknown>,
  index: string,
  deps: { session?: string } = {},
): Promise<string> {
  await mkdir(join(dir, 'src'), { recursive: true })
  await writeFile(
    join(dir, 'package.json'),
    `${JSON.stringify({ type: 'module', exports: { '.': './src/index.ts' }, ...manifest }, null, 2)}\n`,
  )
  await writeFile(join(dir, 'src', 'index.ts'), index)
  await link(dir, '@keel/agent', join(repo, 'packages/core/agent'))
  await link(dir, '@keel/tools', join(repo, 'packages/core/tools'))
  await link(dir, '@keel/session', deps.session ?? join(repo, 'packages/core/session'))
  await link(dir, 'zod', await realpath(join(repo, 'packages/core/session/node_modules/zod')))
  return dir
}

/** A plugin package `name` owning event `event`, with a `<tool>` tool that appends it. */
export function pluginSource(name: string, event: string, tool: string): string {
  return `import { definePlugin } from '@keel/agent'
import { registerEvents } from '@keel/session'
import { defineTool } from '@keel/tools'
import { z } from 'zod'

registerEvents(${JSON.stringify(name)}, { ${JSON.stringify(event)}: z.strictObject({ text: z.string().min(1) }) })

export default definePlugin({
  name: ${JSON.stringify(name)},
  config: z.strictObject({ max: z.number().int().positive().default(3) }),
  events: [${JSON.stringify(event)}],
  setup(ctx) {
    ctx.registerTool(
      defineTool({
        name: ${JSON.stringify(tool)},
        description: 'keep a note',
        inputSchema: z.strictObject({ text: z.string() }),
        annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: false },
        async call(input) {
          ctx.session.append(${JSON.stringify(event)}, { text: input.text })
          return 'noted (max ' + ctx.config.max + ')'
        },
      }),
    )
  },
})
`
}
