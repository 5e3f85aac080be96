import { describe, expect, it } from 'vitest'
import { compileMatcher, fromHookInput, hookToolName, TOOL_MAPPINGS, toHookInput } from '../src/index.js'

const at = { file: 'f', path: 'p' }
const names = [
  'Bash',
  'Read',
  'Write',
  'Edit',
  'NotebookEdit',
  'Glob',
  'Grep',
  'LS',
  'mcp__memory__save',
  'mcp__git__log',
]

function hits(pattern: string | undefined): string[] {
  const matches = compileMatcher(pattern, at)
  return names.filter((n) => matches(n))
}

describe('matchers as Claude Code reads them', () => {
  it('matches everything when absent, empty or *', () => {
    expect(hits(undefined)).toEqual(names)
    expect(hits('')).toEqual(names)
    expect(hits('*')).toEqual(names)
  })

  it('reads plain names and |, comma or space lists as exact names, case-sensitively', () => {
    expect(hits('Edit')).toEqual(['Edit'])
    expect(hits('Edit|Write')).toEqual(['Write', 'Edit'])
    expect(hits('Edit, Write')).toEqual(['Write', 'Edit'])
    expect(hits('bash')).toEqual([])
  })

  it('reads anything else as an unanchored regular expression', () => {
    expect(hits('Edit.*')).toEqual(['Edit', 'NotebookEdit'])
    expect(hits('^(Read|Grep)$')).toEqual(['Read', 'Grep'])
    expect(hits('mcp__memory__.*')).toEqual(['mcp__memory__save'])
  })
})

describe('Keel tool names and inputs as scripts expect them', () => {
  it('maps the built-in tool names', () => {
    expect(
      [
        'bash',
        'read_file',
        'write_file',
        'edit_file',
        'glob',
        'grep',
        'list_dir',
        'todo_write',
        'my_tool',
      ].map((n) => hookToolName(n)),
    ).toEqual(['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep', 'LS', 'TodoWrite', 'my_tool'])
    expect(hookToolName('my_tool', { my_tool: 'Deploy' })).toBe('Deploy')
  })

  it('renames input fields and makes paths absolute', () => {
    expect(
      toHookInput('bash', { command: 'ls', timeoutMs: 5, description: 'list', cwd: 'sub' }, '/p'),
    ).toEqual({
      command: 'ls',
      timeout: 5,
      description: 'list',
      cwd: 'sub',
    })
    expect(
      toHookInput('edit_file', { path: 'a.ts', oldString: 'x', newString: 'y', replaceAll: true }, '/p'),
    ).toEqual({
      file_path: '/p/a.ts',
      old_string: 'x',
      new_string: 'y',
      replace_all: true,
    })
    expect(toHookInput('write_file', { path: '/abs/b', content: 'c' }, '/p')).toEqual({
      file_path: '/abs/b',
      content: 'c',
    })
    expect(toHookInput('read_file', { path: 'r', offset: 2, limit: 3 }, '/p')).toEqual({
      file_path: '/p/r',
      offset: 2,
      limit: 3,
    })
    expect(
      toHookInput('grep', { pattern: 'x', path: 'src', glob: '*.ts', ignoreCase: true, maxMatches: 9 }, '/p'),
    ).toEqual({
      pattern: 'x',
      path: '/p/src',
      glob: '*.ts',
      '-i': true,
      head_limit: 9,
    })
    expect(toHookInput('glob', { pattern: '**/*.ts' }, '/p')).toEqual({ pattern: '**/*.ts' })
    expect(toHookInput('list_dir', {}, '/p')).toEqual({ path: '/p' })
    expect(toHookInput('other', { path: 'x' }, '/p')).toEqual({ path: 'x' })
  })

  it('maps every Keel field of every mapped tool back (round trip)', () => {
    for (const [tool, mapping] of Object.entries(TOOL_MAPPINGS)) {
      const input = Object.fromEntries(Object.keys(mapping.fields).map((k, i) => [k, `/v${i}`]))
      expect(fromHookInput(tool, toHookInput(tool, input, '/p'))).toEqual(input)
    }
  })
})
