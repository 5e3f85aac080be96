// Where agent definitions are found, and which one wins: project (`.keel/agents`, then
// `.claude/agents`) over user (`$KEEL_HOME/agents`, then `~/.claude/agents`) over shipped.
import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { errorMessage, isKeelError, readBoundedText } from '@keel/base'
import { type AgentDefinition, MAX_DEFINITION_BYTES, parseDefinition, SubagentError } from './definition.js'
import type { AgentDefinitionSource } from './events.js'
import { shippedDefinitions } from './shipped.js'

/** One folder scanned for `*.md` definitions. */
export interface DefinitionRoot {
  readonly dir: string
  readonly source: Exclude<AgentDefinitionSource, 'shipped'>
}

/** The folders of {@link loadAgentCatalog}, in precedence order. */
export function definitionRoots(places: { cwd: string; keelHome: string; home: string }): DefinitionRoot[] {
  return [
    { dir: join(places.cwd, '.keel', 'agents'), source: 'project' },
    { dir: join(places.cwd, '.claude', 'agents'), source: 'project' },
    { dir: join(places.keelHome, 'agents'), source: 'user' },
    { dir: join(places.home, '.claude', 'agents'), source: 'user' },
  ]
}

/** What was found: the winning definition of each name, the shadowed ones, and every file that failed. */
export interface AgentCatalog {
  /** By name, in precedence order of discovery (project first, shipped last). */
  readonly agents: ReadonlyMap<string, AgentDefinition>
  /** Definitions hidden by one of the same name with higher precedence. */
  readonly shadowed: readonly AgentDefinition[]
  /** Files that could not be used, each a {@link SubagentError} naming the file, line and field. */
  readonly problems: readonly SubagentError[]
}

/** Bounds of the scan of one folder: definition files are few and small; a huge tree is a mistake. */
const MAX_DEPTH = 4
const MAX_FILES = 256

/** The `*.md` files under `dir` (recursively, not following symlinked folders), sorted; none when it is absent. */
async function markdownFiles(dir: string, problems: SubagentError[]): Promise<string[]> {
  const found: string[] = []
  const walk = async (at: string, depth: number): Promise<void> => {
    let entries: Dirent[]
    try {
      entries = await readdir(at, { withFileTypes: true })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return
      throw error
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(at, entry.name)
      if (entry.isDirectory() && depth < MAX_DEPTH) await walk(path, depth + 1)
      else if (entry.name.endsWith('.md') && (entry.isFile() || entry.isSymbolicLink())) {
        if (found.length >= MAX_FILES) {
          problems.push(
            new SubagentError(
              'AGENT_DEFINITION_INVALID',
              `${dir}: more than ${MAX_FILES} definition files; the rest are not read`,
              { file: dir, line: 1 },
            ),
          )
          return
        }
        found.push(path)
      }
    }
  }
  await walk(dir, 0)
  return found
}

async function readDefinition(file: string, source: DefinitionRoot['source']): Promise<AgentDefinition> {
  // one open, checked as it is read: no file swapped in between a check and the read
  const read = readBoundedText(file, MAX_DEFINITION_BYTES)
  if (read.kind === 'missing') {
    throw new SubagentError('AGENT_DEFINITION_INVALID', `${file}:1: cannot be read: it is gone`, {
      file,
      line: 1,
    })
  }
  if (read.kind === 'not-a-file') {
    throw new SubagentError('AGENT_DEFINITION_INVALID', `${file}:1: not a regular file (${read.what})`, {
      file,
      line: 1,
    })
  }
  if (read.kind === 'too-large') {
    throw new SubagentError(
      'AGENT_DEFINITION_INVALID',
      `${file}:1: ${read.bytes} bytes; a definition may have at most ${MAX_DEFINITION_BYTES}`,
      { file, line: 1 },
    )
  }
  return parseDefinition(read.text, file, source)
}

/**
 * Reads every definition under `roots` and adds the shipped ones. The first definition of
 * a name in precedence order wins; two files of the same folder defining one name are a
 * problem (`AGENT_DEFINITION_DUPLICATE`; the first by path is used). A file that fails to
 * parse is listed in `problems` and skipped; an unreadable folder throws.
 */
export async function loadAgentCatalog(
  roots: readonly DefinitionRoot[],
  shipped: readonly AgentDefinition[] = shippedDefinitions,
): Promise<AgentCatalog> {
  const agents = new Map<string, AgentDefinition>()
  const shadowed: AgentDefinition[] = []
  const problems: SubagentError[] = []
  const add = (definition: AgentDefinition): void => {
    if (agents.has(definition.name)) shadowed.push(definition)
    else agents.set(definition.name, definition)
  }
  for (const root of roots) {
    const inRoot = new Map<string, string>()
    for (const file of await markdownFiles(root.dir, problems)) {
      let definition: AgentDefinition
      try {
        definition = await readDefinition(file, root.source)
      } catch (error) {
        if (!isKeelError(error) && (error as NodeJS.ErrnoException).code === undefined) throw error
        problems.push(
          isKeelError(error)
            ? (error as SubagentError)
            : new SubagentError(
                'AGENT_DEFINITION_INVALID',
                `${file}:1: cannot be read: ${errorMessage(error)}`,
                { file, line: 1 },
              ),
        )
        continue
      }
      const first = inRoot.get(definition.name)
      if (first !== undefined) {
        problems.push(
          new SubagentError(
            'AGENT_DEFINITION_DUPLICATE',
            `${file}:1: name: ${definition.name} is already defined by ${relative(root.dir, first)} in the same folder; this file is not used`,
            { file, line: 1, field: 'name' },
          ),
        )
        continue
      }
      inRoot.set(definition.name, file)
      add(definition)
    }
  }
  for (const definition of shipped) add(definition)
  return { agents, shadowed, problems }
}

/** Characters of a description `/agents` shows on an agent's line. */
const SHOWN_DESCRIPTION = 160

/**
 * What `/agents` answers: one line per agent (a long description cut at a word, with `…`),
 * then the definitions overridden by others and the files that failed.
 */
export function describeCatalog(catalog: AgentCatalog): string {
  const rows = [...catalog.agents.values()].map(
    (d) =>
      `${d.name} (${d.source}${d.file ? ` ${d.file}` : ''}): ${clipAtWord(d.description, SHOWN_DESCRIPTION)}`,
  )
  const shadowed = catalog.shadowed.map(
    (d) => `${d.name} (${d.source}${d.file ? ` ${d.file}` : ''}) is overridden`,
  )
  const problems = catalog.problems.map((p) => `${p.code}: ${p.message}`)
  return [...rows, ...shadowed, ...problems].join('\n')
}

/** `text` on one line, at most `max` characters: cut at the last word that fits, then `…`. */
function clipAtWord(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim()
  if (flat.length <= max) return flat
  const cut = flat.slice(0, max - 1)
  const space = cut.lastIndexOf(' ')
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`
}
