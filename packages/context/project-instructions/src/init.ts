import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { readBounded } from './files.js'

/** Files whose head tells a newcomer how a repository is built and tested, in the order shown. */
const TELLING_FILES = [
  'AGENTS.md',
  'CLAUDE.md',
  '.keel/AGENTS.md',
  'README.md',
  'README',
  'CONTRIBUTING.md',
  'package.json',
  'pnpm-workspace.yaml',
  'pyproject.toml',
  'setup.cfg',
  'Cargo.toml',
  'go.mod',
  'Makefile',
  'justfile',
  'Gemfile',
  'pom.xml',
  'build.gradle',
  '.cursorrules',
  '.github/copilot-instructions.md',
] as const

/** Directory entries never worth listing. */
const NOISE = new Set(['.git', 'node_modules', 'dist', 'build', 'target', '.venv', '__pycache__', '.turbo'])

const MAX_ENTRIES = 120
const MAX_FILE_BYTES = 4096
const MAX_OVERVIEW_BYTES = 24_576

/**
 * A short overview of the repository at `root` for the model to start from: its top-level
 * entries and the head of the files that say how it is built, tested and run (capped per
 * file and in total). Unreadable entries are skipped; the model has tools to look further.
 */
export async function repositoryOverview(root: string): Promise<string> {
  const entries = await readdir(root, { withFileTypes: true })
  const names = entries
    .filter((e) => !NOISE.has(e.name))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort()
  const listing = names.slice(0, MAX_ENTRIES).join('\n')
  const more = names.length > MAX_ENTRIES ? `\n… ${names.length - MAX_ENTRIES} more` : ''
  const parts = [`Top-level entries of ${root}:\n${listing}${more}`]
  let budget = MAX_OVERVIEW_BYTES - parts[0]!.length
  for (const name of TELLING_FILES) {
    if (budget <= 0) break
    const read = await readBounded(join(root, name), Math.min(MAX_FILE_BYTES, budget))
    if (read.kind !== 'file' || read.text.trim() === '') continue
    const cut = read.deliveredBytes < read.bytes ? `\n… (${read.bytes - read.deliveredBytes} more bytes)` : ''
    const part = `--- ${name} ---\n${read.text.trimEnd()}${cut}`
    parts.push(part)
    budget -= part.length
  }
  return parts.join('\n\n')
}

/**
 * The request `/init` queues as a user turn: draft (or improve) `AGENTS.md` at the project
 * root from the repository, using the agent's tools to read more and to write the file.
 */
export function initPrompt(root: string, overview: string, focus: string): string {
  return [
    `Write an AGENTS.md file for the repository at ${root} (the file: ${join(root, 'AGENTS.md')}). ` +
      'Future coding agents working here will read it at the start of every session, so it should tell them ' +
      'what they cannot see quickly from the code:',
    '- how to build, lint and test, including how to run a single test;',
    '- the big picture of the architecture: how the main parts fit together, where things live;',
    '- conventions and rules that hold across the repository (style, naming, generated files, what not to touch).',
    'Keep it short and specific: no generic advice, nothing invented, no listing of every file. ' +
      'If AGENTS.md (or CLAUDE.md, .cursorrules, .github/copilot-instructions.md) already exists, keep what is ' +
      'right, fold the others in, and improve it rather than starting over. Read what you need with the tools ' +
      'first; then write the file and say in two or three sentences what you put in it.',
    ...(focus === '' ? [] : [`The user asks you to pay attention to: ${focus}`]),
    `What Keel already gathered:\n\n${overview}`,
  ].join('\n')
}
