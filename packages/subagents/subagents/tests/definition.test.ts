import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import { describe, expect, it } from 'vitest'
import {
  type AgentCatalog,
  definitionRoots,
  describeCatalog,
  loadAgentCatalog,
  parseDefinition,
  pickDefinition,
  type SubagentError,
  shippedDefinitions,
} from '../src/index.js'

function failure(text: string): SubagentError {
  try {
    parseDefinition(text, 'agents/x.md', 'project')
  } catch (error) {
    if (isKeelError(error)) return error as SubagentError
    throw error
  }
  throw new Error('expected a SubagentError')
}

describe('parseDefinition', () => {
  it("reads Claude Code's format: front matter fields, the body as the prompt, its tool names in Keel's", () => {
    const definition = parseDefinition(
      [
        '---',
        'name: code-reviewer',
        'description: Reviews code. Use proactively after edits.',
        'tools: Read, Glob, Grep, Bash',
        'disallowedTools: [Write]',
        'model: sonnet',
        'permissionMode: plan',
        'maxTurns: 12',
        'color: blue',
        '---',
        'You are a code reviewer.',
        '',
        'Be brief.',
        '',
      ].join('\n'),
      '/p/.claude/agents/code-reviewer.md',
      'project',
    )
    expect(definition).toMatchObject({
      name: 'code-reviewer',
      description: 'Reviews code. Use proactively after edits.',
      tools: ['read_file', 'glob', 'grep', 'bash'],
      disallowedTools: ['write_file'],
      permissionMode: 'plan',
      maxTurns: 12,
      prompt: 'You are a code reviewer.\n\nBe brief.',
      source: 'project',
      file: '/p/.claude/agents/code-reviewer.md',
    })
    // Claude Code's model aliases name models Keel does not route: the parent's model is used
    expect(definition.model).toBeUndefined()
    expect(definition.digest).toMatch(/^sha256:[0-9a-f]{64}$/u)
    const withModel = parseDefinition(
      '---\nname: a\ndescription: d\nmodel: deepseek-reasoner\n---\n',
      'a.md',
      'user',
    )
    expect(withModel.model).toBe('deepseek-reasoner')
    expect(withModel.prompt).toBe('')
  })

  it.each([
    ['no front matter', 'name: x\n', 1, undefined, 'starts with a --- line'],
    ['an unclosed front matter', '---\nname: x\ndescription: d\n', 4, undefined, 'never closed'],
    ['YAML that does not parse', '---\nname: x\ndescription: [d\n---\n', 3, undefined, 'not valid YAML'],
    ['a duplicate key', '---\nname: x\nname: y\ndescription: d\n---\n', 3, undefined, 'not valid YAML'],
    ['a missing name', '---\ndescription: d\n---\n', 2, 'name', 'is required'],
    ['a bad name', '---\ndescription: d\nname: Code Reviewer\n---\n', 3, 'name', 'lower-case'],
    ['an empty description', '---\nname: x\ndescription: "  "\n---\n', 3, 'description', 'say when'],
    [
      'a bad tool name',
      '---\nname: x\ndescription: d\ntools:\n  - Read\n  - "Bash(git *)"\n---\n',
      6,
      'tools[1]',
      'tool name',
    ],
    ['a bad mode', '---\nname: x\ndescription: d\npermissionMode: yolo\n---\n', 4, 'permissionMode', ''],
    ['a bad number', '---\nname: x\ndescription: d\n\nmaxTurns: -3\n---\n', 5, 'maxTurns', ''],
    ['a list for front matter', '---\n- a\n- b\n---\n', 2, undefined, 'key: value'],
  ])('names the file, line and field of %s', (_, text, line, field, words) => {
    const error = failure(text)
    expect(error.code).toBe('AGENT_DEFINITION_INVALID')
    expect(error.details).toMatchObject({ file: 'agents/x.md', line, ...(field ? { field } : {}) })
    expect(error.message).toMatch(
      new RegExp(`^agents/x\\.md:${line}: ${field ? `${field.replace(/[[\]]/gu, '\\$&')}: ` : ''}`, 'u'),
    )
    expect(error.message).toContain(words)
    expect(error.message).not.toContain('\n')
  })
})

async function tempRoots() {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-agents-')))
  const places = { cwd: join(base, 'ws'), keelHome: join(base, 'keel'), home: base }
  return { base, places, roots: definitionRoots(places) }
}

async function put(dir: string, file: string, name: string, description: string): Promise<void> {
  await mkdir(dir, { recursive: true })
  await writeFile(
    join(dir, file),
    `---\nname: ${name}\ndescription: ${description}\n---\nprompt of ${description}\n`,
  )
}

function described(catalog: AgentCatalog, name: string): string | undefined {
  return catalog.agents.get(name)?.description
}

describe('loadAgentCatalog', () => {
  it('/agents shows each agent on a line; a long description is cut at a word and ends with …', async () => {
    const { places, roots } = await tempRoots()
    await put(
      join(places.cwd, '.keel', 'agents'),
      'long.md',
      'long',
      `Reads ${'every file '.repeat(30)}carefully.`,
    )
    const text = describeCatalog(await loadAgentCatalog(roots))
    const line = text.split('\n').find((l) => l.startsWith('long '))!
    expect(line).toMatch(/^long \(project [^)]+long\.md\): Reads (every file )+every…$/u)
    const shipped = text.split('\n').find((l) => l.startsWith('general-purpose '))!
    expect(shipped.endsWith('…')).toBe(true)
    expect(shipped).not.toMatch(/ \S{1,2}…$/u) // not a word cut in two, as "wo…"
  })

  it('prefers the project (.keel over .claude) over the user ($KEEL_HOME over ~/.claude) over shipped', async () => {
    const { places, roots } = await tempRoots()
    await put(join(places.cwd, '.keel', 'agents'), 'a.md', 'one', 'keel project')
    await put(join(places.cwd, '.claude', 'agents'), 'a.md', 'one', 'claude project')
    await put(join(places.cwd, '.claude', 'agents', 'nested'), 'b.md', 'two', 'claude project, nested')
    await put(join(places.keelHome, 'agents'), 'b.md', 'two', 'keel user')
    await put(join(places.home, '.claude', 'agents'), 'c.md', 'three', 'claude user')
    await put(join(places.home, '.claude', 'agents'), 'e.md', 'explore', 'my own explore')
    const catalog = await loadAgentCatalog(roots)
    expect(described(catalog, 'one')).toBe('keel project')
    expect(described(catalog, 'two')).toBe('claude project, nested')
    expect(described(catalog, 'three')).toBe('claude user')
    expect(described(catalog, 'explore')).toBe('my own explore')
    expect(catalog.agents.get('general-purpose')?.source).toBe('shipped')
    expect(catalog.shadowed.map((d) => `${d.name}:${d.description}`).sort()).toEqual([
      'explore:' + shippedDefinitions.find((d) => d.name === 'explore')!.description,
      'one:claude project',
      'two:keel user',
    ])
    expect(catalog.problems).toEqual([])
  })

  it('reports a broken file and a duplicate name in one folder, and uses the rest', async () => {
    const { places, roots } = await tempRoots()
    const dir = join(places.cwd, '.keel', 'agents')
    await put(dir, 'a.md', 'same', 'first')
    await put(dir, 'b.md', 'same', 'second')
    await writeFile(join(dir, 'c.md'), '---\nname: c\n---\n')
    await writeFile(join(dir, 'notes.txt'), 'not a definition')
    await symlink(join(dir, 'missing-target.md'), join(dir, 'dangling.md'))
    const catalog = await loadAgentCatalog(roots)
    expect(described(catalog, 'same')).toBe('first')
    expect(catalog.problems.map((p) => p.code).sort()).toEqual([
      'AGENT_DEFINITION_DUPLICATE',
      'AGENT_DEFINITION_INVALID',
      'AGENT_DEFINITION_INVALID',
    ])
    const messages = catalog.problems.map((p) => p.message).join('\n')
    expect(messages).toContain(`${join(dir, 'b.md')}:1: name: same is already defined by a.md`)
    expect(messages).toContain(`${join(dir, 'c.md')}:2: description: is required`)
    expect(messages).toContain(`${join(dir, 'dangling.md')}:1: cannot be read`)
  })

  it('refuses an oversized file', async () => {
    const { places, roots } = await tempRoots()
    const dir = join(places.keelHome, 'agents')
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, 'big.md'), `---\nname: big\ndescription: d\n---\n${'x'.repeat(300 * 1024)}`)
    const catalog = await loadAgentCatalog(roots)
    expect(catalog.agents.has('big')).toBe(false)
    expect(catalog.problems[0]!.message).toMatch(
      /big\.md:1: \d+ bytes; a definition may have at most 262144$/u,
    )
  })
})

describe('pickDefinition', () => {
  const unknown = (catalog: AgentCatalog, name: string): SubagentError => {
    try {
      pickDefinition(catalog, name)
    } catch (error) {
      if (isKeelError(error)) return error as SubagentError
      throw error
    }
    throw new Error('expected a SubagentError')
  }

  it('names an unknown agent and the known ones, quoting a pasted megabyte by its ends only', async () => {
    const catalog = await loadAgentCatalog([])
    const short = unknown(catalog, 'reviewer-x')
    expect(short.code).toBe('AGENT_UNKNOWN')
    expect(short.message).toContain('"reviewer-x"')
    for (const d of shippedDefinitions) expect(short.message).toContain(d.name)

    const long = unknown(catalog, `head-${'x'.repeat(1_000_000)}-tail`)
    expect(long.code).toBe('AGENT_UNKNOWN')
    expect(long.message.length).toBeLessThan(2_000)
    expect(long.message).toMatch(/^no agent named "head-x+…\[[\d,]+ characters elided\]…x+-tail"; agents: /)
    expect(String(long.details.agent).length).toBeLessThan(400)
  })
})

describe('a definition that is not a regular file (a cloned repository can hold a symbolic link)', () => {
  it('a link to /dev/zero, or to a FIFO, is one problem naming it, never read', async () => {
    const { places, roots } = await tempRoots()
    const dir = join(places.cwd, '.keel', 'agents')
    await mkdir(dir, { recursive: true })
    await symlink('/dev/zero', join(dir, 'zero.md'))
    // a FIFO itself is not listed (only files and links are); a link to one is
    execFileSync('mkfifo', [join(places.cwd, 'pipe')])
    await symlink(join(places.cwd, 'pipe'), join(dir, 'fifo.md'))
    const catalog = await loadAgentCatalog(roots)
    const messages = catalog.problems.map((p) => p.message)
    expect(messages).toContain(`${join(dir, 'zero.md')}:1: not a regular file (a character device)`)
    expect(messages).toContain(`${join(dir, 'fifo.md')}:1: not a regular file (a FIFO)`)
  })
})
