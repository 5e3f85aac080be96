// `pnpm new-plugin <name> --event <verb> [--tool <tool_name>] [--dir <path> [--scope <@scope>]] [--group <group>] [--root <repo>] [--no-gen]`
// Scaffolds a plugin package (see new-plugin/templates.ts) with one event (`<name>/<verb>`) and
// one tool, then runs the persistence catalog generator, which writes src/events.generated.ts.
// Without --dir the package goes into this repository (packages/<group>/<name>, @keel/<name>);
// with --dir it goes anywhere else, as a third party's (`<scope>/<name>`), its Keel packages
// linked to this checkout, and the generator runs for it alone (--package). Relative paths are
// taken from where pnpm was started (INIT_CWD).
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorMessage } from '@keel/base'
import { CatalogError } from './catalog/errors.js'
import { generateOutside } from './catalog/outside.js'
import { generateAndWrite } from './catalog/release.js'
import { loadProject } from './catalog/workspace.js'
import { type KeelCheckout, type PluginSpec, pluginFiles } from './new-plugin/templates.js'

const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/
const USAGE = `usage: pnpm new-plugin <name> --event <verb> [--tool <tool_name>] [--dir <path> [--scope <@scope>]] [--group <group>]
  <name>   lower-case kebab-case, the event prefix: "notes"
  --event  the event's verb, kebab-case: --event added makes notes/added
  --tool   the tool's name (default <name>_<verb>, e.g. notes_added)
  --dir    write the package there, outside this repository (a third-party plugin), named <scope>/<name>
  --scope  the npm scope of an outside package (default: none), e.g. --scope @acme`

/** A refused command line: the message and the exit code. */
class Refused extends Error {
  constructor(
    message: string,
    readonly code: 1 | 2,
  ) {
    super(message)
  }
}

function versionOf(dir: string): string {
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version
}

/** What an outside package links to in this checkout (paths relative to `target`). */
function checkout(root: string, target: string): KeelCheckout {
  const dirs: Record<string, string> = {
    '@keel/agent': 'packages/core/agent',
    '@keel/session': 'packages/core/session',
    '@keel/tools': 'packages/core/tools',
    '@keel/deepseek': 'packages/llm/deepseek',
    '@keel/scripted-server': 'packages/llm/scripted-server',
    '@keel/store': 'packages/store/store',
  }
  const rel = (abs: string) => relative(target, abs) || '.'
  const packages = Object.fromEntries(
    Object.entries(dirs).map(([n, d]) => [
      n,
      { link: rel(join(root, d)), version: versionOf(join(root, d)) },
    ]),
  )
  const tools = Object.fromEntries(
    ['@types/node', 'typescript', 'vitest'].map((n) => [n, rel(realpathSync(join(root, 'node_modules', n)))]),
  )
  const base = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: Record<string, unknown>
  }
  return { packages, tools, zod: zodVersion(root), compilerOptions: base.compilerOptions }
}

function zodVersion(root: string): string {
  const manifest = JSON.parse(readFileSync(join(root, 'packages/core/session/package.json'), 'utf8')) as {
    dependencies: Record<string, string>
  }
  return manifest.dependencies.zod!
}

interface Parsed {
  spec: PluginSpec
  /** The package directory (absolute). */
  target: string
  root: string
  gen: boolean
}

function parse(argv: readonly string[], from: string): Parsed {
  const args = [...argv].filter((a) => a !== '--')
  const take = (flag: string): string | undefined => {
    const i = args.indexOf(flag)
    if (i < 0) return undefined
    const value = args[i + 1]
    if (value === undefined || value.startsWith('--')) throw new Refused(`${flag} needs a value\n${USAGE}`, 2)
    args.splice(i, 2)
    return value
  }
  const gen = !args.includes('--no-gen')
  if (!gen) args.splice(args.indexOf('--no-gen'), 1)
  const event = take('--event')
  const group = take('--group')
  const dir = take('--dir')
  const scope = take('--scope')
  const root = resolve(take('--root') ?? join(dirname(fileURLToPath(import.meta.url)), '..'))
  const tool = take('--tool')
  const [name, ...extra] = args
  if (!name || !KEBAB.test(name) || extra.length > 0)
    throw new Refused(
      `${name === undefined ? 'a name is required' : `bad arguments: ${args.join(' ')}`}\n${USAGE}`,
      2,
    )
  if (event === undefined || !KEBAB.test(event))
    throw new Refused(`--event must be a kebab-case verb (--event added)\n${USAGE}`, 2)
  const toolName = tool ?? `${name}_${event}`.replace(/-/g, '_')
  if (!/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/.test(toolName))
    throw new Refused(
      `--tool ${JSON.stringify(toolName)}: letters, digits, _ and -, starting with a letter`,
      2,
    )
  if (scope !== undefined && !/^@[a-z0-9][a-z0-9._-]*$/.test(scope))
    throw new Refused(`--scope ${JSON.stringify(scope)} must look like @acme`, 2)
  if (dir === undefined) {
    if (scope !== undefined) throw new Refused('--scope is for a package outside the repository (--dir)', 2)
    const folder = group ?? name
    if (!KEBAB.test(folder))
      throw new Refused(`--group ${JSON.stringify(folder)} must be lower-case kebab-case`, 2)
    const rel = `packages/${folder}/${name}`
    const spec: PluginSpec = {
      name,
      pkg: `@keel/${name}`,
      event,
      tool: toolName,
      layout: { kind: 'workspace', dir: rel },
    }
    return { spec, target: join(root, rel), root, gen }
  }
  if (group !== undefined) throw new Refused('--group is for a package inside the repository (no --dir)', 2)
  const target = resolve(from, dir)
  if (target === root || target.startsWith(`${join(root, 'packages')}/`))
    throw new Refused(
      `--dir ${target} is inside this repository's packages; leave out --dir for a Keel package`,
      2,
    )
  const pkg = scope === undefined ? name : `${scope}/${name}`
  const spec: PluginSpec = {
    name,
    pkg,
    event,
    tool: toolName,
    layout: { kind: 'outside', keel: checkout(root, target) },
  }
  return { spec, target, root, gen }
}

function write(target: string, files: Record<string, string>, show: (abs: string) => string): void {
  for (const [path, text] of Object.entries(files)) {
    const abs = join(target, path)
    mkdirSync(dirname(abs), { recursive: true })
    writeFileSync(abs, text)
    console.log(`created ${show(abs)}`)
  }
}

function generate(parsed: Parsed): string[] {
  if (parsed.spec.layout.kind === 'workspace') {
    const { lines, history } = generateAndWrite({ root: parsed.root })
    return [...lines, ...history.problems.map((p) => `  ${p}`)]
  }
  const result = generateOutside(parsed.root, loadProject(parsed.root, { outside: [parsed.target] }), false)
  if (result.failed.length > 0) throw new Error(result.lines.join('\n'))
  return result.lines
}

function main(argv: readonly string[]): number {
  const from = process.env.INIT_CWD ?? process.cwd()
  let parsed: Parsed
  try {
    parsed = parse(argv, from)
  } catch (error) {
    console.error(errorMessage(error))
    return error instanceof Refused ? error.code : 1
  }
  const { spec, target, root } = parsed
  const show = (abs: string) => {
    const near = relative(spec.layout.kind === 'workspace' ? root : from, abs)
    return near.startsWith('..') ? abs : near
  }
  if (existsSync(target)) {
    console.error(`${show(target)} already exists; pick another name or directory`)
    return 1
  }
  const zod = spec.layout.kind === 'outside' ? spec.layout.keel.zod : zodVersion(root)
  write(target, pluginFiles(spec, zod), show)
  if (spec.layout.kind === 'workspace') {
    write(
      root,
      {
        [`.changeset/${spec.name}-initial.md`]: `---\n'${spec.pkg}': minor\n---\n\nFirst release of ${spec.pkg}.\n`,
      },
      show,
    )
  }
  if (parsed.gen) {
    try {
      for (const line of generate(parsed)) console.log(line)
    } catch (error) {
      const problems =
        error instanceof CatalogError ? error.problems.map((p) => p.message) : [errorMessage(error)]
      console.error(
        `the package was created, but its validators could not be generated:\n  ${problems.join('\n  ')}`,
      )
      return 1
    }
  }
  const type = `${spec.name}/${spec.event}`
  const regen =
    spec.layout.kind === 'workspace'
      ? 'pnpm gen-persistence-catalog'
      : `pnpm gen-persistence-catalog --package ${target}`
  console.log(
    spec.layout.kind === 'workspace'
      ? `\nnext: pnpm install; edit src/events.ts (${type}) and src/tool.ts, run ${regen} after every change to an event, then pnpm gen-persistence-catalog --record "<why>" for the new event`
      : `\nnext: cd ${show(target)} && pnpm install && pnpm test; install it where keel finds it (pnpm add link:${target} in your project, or in $KEEL_HOME), copy examples/preset.json to <project>/.keel/presets/${spec.name}.json, and try it: pnpm scripted-server --script ${join(target, 'examples/script.json')}. After every change to ${type}'s declaration: ${regen}`,
  )
  return 0
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2))
}
