import { isAbsolute, resolve } from 'node:path'

/**
 * How one Keel tool appears to hook scripts: the `tool_name` they see and how each input
 * field is renamed. Fields not listed pass through unchanged. `absolute` fields are resolved
 * against the project directory, because Claude Code always hands scripts absolute paths.
 */
export interface ToolMapping {
  readonly hookName: string
  /** Keel field → hook field. */
  readonly fields: Readonly<Record<string, string>>
  /** Hook fields whose value is a path made absolute. */
  readonly absolute?: readonly string[]
  /** A hook field given the project directory when Keel's input leaves it out. */
  readonly defaultDir?: string
}

/**
 * Keel's built-in tools (packages `@keel/fs`, `@keel/shell`, `@keel/todo`) under the names
 * and field names Claude Code's scripts expect. Tools not listed keep their own name and
 * input (MCP-style and plugin tools).
 */
export const TOOL_MAPPINGS: Readonly<Record<string, ToolMapping>> = {
  bash: {
    hookName: 'Bash',
    fields: { command: 'command', description: 'description', timeoutMs: 'timeout' },
  },
  read_file: {
    hookName: 'Read',
    fields: { path: 'file_path', offset: 'offset', limit: 'limit' },
    absolute: ['file_path'],
  },
  write_file: {
    hookName: 'Write',
    fields: { path: 'file_path', content: 'content' },
    absolute: ['file_path'],
  },
  edit_file: {
    hookName: 'Edit',
    fields: {
      path: 'file_path',
      oldString: 'old_string',
      newString: 'new_string',
      replaceAll: 'replace_all',
    },
    absolute: ['file_path'],
  },
  glob: { hookName: 'Glob', fields: { pattern: 'pattern', path: 'path' }, absolute: ['path'] },
  grep: {
    hookName: 'Grep',
    fields: { pattern: 'pattern', path: 'path', glob: 'glob', ignoreCase: '-i', maxMatches: 'head_limit' },
    absolute: ['path'],
  },
  list_dir: { hookName: 'LS', fields: { path: 'path' }, absolute: ['path'], defaultDir: 'path' },
  todo_write: { hookName: 'TodoWrite', fields: { todos: 'todos' } },
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The `tool_name` hook scripts see for Keel tool `name` (`overrides` first, then {@link TOOL_MAPPINGS}). */
export function hookToolName(name: string, overrides: Readonly<Record<string, string>> = {}): string {
  return overrides[name] ?? TOOL_MAPPINGS[name]?.hookName ?? name
}

/** Keel's input of tool `name` as the `tool_input` hook scripts expect (renamed fields, absolute paths). */
export function toHookInput(name: string, input: unknown, projectDir: string): unknown {
  const mapping = TOOL_MAPPINGS[name]
  if (!mapping || !isRecord(input)) return input
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) out[mapping.fields[key] ?? key] = value
  for (const field of mapping.absolute ?? []) {
    const value = out[field]
    if (typeof value === 'string' && !isAbsolute(value)) out[field] = resolve(projectDir, value)
  }
  if (mapping.defaultDir !== undefined && out[mapping.defaultDir] === undefined) {
    out[mapping.defaultDir] = projectDir
  }
  return out
}

/**
 * The reverse of {@link toHookInput}: an `updatedInput` a hook returned, renamed back to
 * Keel's fields (paths stay as the hook wrote them). The result still has to pass the tool's
 * own schema; unknown fields are kept so that schema can refuse them by name.
 */
export function fromHookInput(name: string, input: unknown): unknown {
  const mapping = TOOL_MAPPINGS[name]
  if (!mapping || !isRecord(input)) return input
  const back = new Map(Object.entries(mapping.fields).map(([keel, hook]) => [hook, keel]))
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) out[back.get(key) ?? key] = value
  return out
}

/** Text of a tool output, as hooks get it in `tool_response` / `error`. */
export interface ToolResultText {
  readonly text: string
  readonly isError: boolean
}

/**
 * The `tool_response` of PostToolUse, shaped like Claude Code's where scripts commonly read
 * it (Bash: `{stdout, stderr, interrupted, isImage}`; Write/Edit: `{filePath, success}`);
 * other tools get the output text.
 */
export function toHookResponse(name: string, hookInput: unknown, result: ToolResultText): unknown {
  const filePath =
    isRecord(hookInput) && typeof hookInput.file_path === 'string' ? hookInput.file_path : undefined
  switch (name) {
    case 'bash':
      return { stdout: result.text, stderr: '', interrupted: false, isImage: false }
    case 'write_file':
    case 'edit_file':
      return { filePath, success: !result.isError, output: result.text }
    default:
      return result.text
  }
}
