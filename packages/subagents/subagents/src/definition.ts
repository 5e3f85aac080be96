// One agent definition file: YAML front matter (name, description, tools, model, permission
// mode, …) and a Markdown body, the child's system prompt. Claude Code's format, read strictly:
// a malformed file is a typed error naming the file, the line and the field.
import { createHash } from 'node:crypto'
import { boundIssues, errorMessage, formatJsonPath, KeelError } from '@keel/base'
import type { ApprovalPolicy, SandboxMode } from '@keel/user-approval'
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml'
import { z } from 'zod'
import type { AgentDefinitionSource } from './events.js'

/** Codes of {@link SubagentError}. */
export type SubagentErrorCode =
  /** A definition file does not parse or a field is wrong (`details`: file, line, field). */
  | 'AGENT_DEFINITION_INVALID'
  /** Two files of the same directory define the same name. */
  | 'AGENT_DEFINITION_DUPLICATE'
  /** The `task` call named an agent nobody defines. */
  | 'AGENT_UNKNOWN'
  /** Too many `task` calls are running or the delegation is too deep. */
  | 'SUBAGENT_LIMIT'
  /** The embedding program lent no child sessions (`AgentOptions.sessions`). */
  | 'SUBAGENTS_UNAVAILABLE'
  /** The child agent could not be created or did not complete. */
  | 'SUBAGENT_FAILED'

/** A typed failure of `@keel/subagents`. */
export class SubagentError extends KeelError<SubagentErrorCode> {}

/**
 * Claude Code's permission modes. A child never gets more than its parent: `plan` runs it
 * read-only, `dontAsk` refuses what it would ask about; `default`, `acceptEdits`, `auto`
 * and `bypassPermissions` keep the parent's policy (they cannot widen it).
 */
export type PermissionMode = 'default' | 'plan' | 'dontAsk' | 'acceptEdits' | 'auto' | 'bypassPermissions'

/** An agent the `task` tool can run. */
export interface AgentDefinition {
  /** Lower-case letters, digits and `-` (`code-reviewer`). */
  readonly name: string
  /** When to delegate to it, written for the model. */
  readonly description: string
  /** The tools it may use (Keel names; Claude Code's `Read`, `Bash`, … are translated); absent: the parent's. */
  readonly tools?: readonly string[]
  /** Tools it never gets. */
  readonly disallowedTools?: readonly string[]
  /** The model id it runs; absent: the parent's (`inherit`). */
  readonly model?: string
  readonly permissionMode?: PermissionMode
  /** Keel's own narrowing, besides `permissionMode`. */
  readonly approvalPolicy?: ApprovalPolicy
  readonly sandboxMode?: SandboxMode
  /** Model calls per run before it stops (`max-steps`). */
  readonly maxTurns?: number
  /** The body: the child's system prompt. */
  readonly prompt: string
  readonly source: AgentDefinitionSource
  /** The file it was read from (absent for shipped definitions). */
  readonly file?: string
  /** `sha256:` and the hex SHA-256 of the file's bytes (of the definition's JSON when shipped). */
  readonly digest: string
}

/** Largest definition file read (bytes). */
export const MAX_DEFINITION_BYTES = 256 * 1024

/** Claude Code's tool names and the Keel tools they mean. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = Object.freeze({
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'list_dir',
  Bash: 'bash',
  TodoWrite: 'todo_write',
  Task: 'task',
  Agent: 'task',
})

/** Claude Code's model aliases: Anthropic models Keel does not route, read as `inherit`. */
const CLAUDE_MODEL_ALIASES = new Set(['inherit', 'sonnet', 'opus', 'haiku', 'fable'])

const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/u, 'a tool name is 1-64 of A-Z a-z 0-9 _ -')
  .transform((name) => CLAUDE_TOOL_NAMES[name] ?? name)

/** A list written as YAML (`[a, b]`, `- a`) or as one comma-separated string (`Read, Grep`). */
const toolList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) =>
    (typeof value === 'string' ? value.split(',') : value).map((t) => t.trim()).filter((t) => t !== ''),
  )
  .pipe(z.array(toolName))
  .transform((names) => [...new Set(names)])

const frontMatterSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,63}$/u, 'use 1-64 lower-case letters, digits and -, starting with a letter'),
  description: z.string().trim().min(1, 'say when the agent should be used'),
  tools: toolList.optional(),
  disallowedTools: toolList.optional(),
  model: z.string().trim().min(1).optional(),
  permissionMode: z
    .enum(['default', 'plan', 'dontAsk', 'acceptEdits', 'auto', 'bypassPermissions'])
    .optional(),
  approvalPolicy: z.enum(['strict', 'on_request', 'never']).optional(),
  sandboxMode: z.enum(['read_only', 'workspace_write', 'danger_full_access']).optional(),
  maxTurns: z.number().int().positive().max(1000).optional(),
})

function invalid(file: string, line: number, field: string | undefined, problem: string): SubagentError {
  const where = field === undefined ? `${file}:${line}` : `${file}:${line}: ${field}`
  return new SubagentError('AGENT_DEFINITION_INVALID', `${where}: ${problem}`, {
    file,
    line,
    ...(field === undefined ? {} : { field }),
  })
}

/** `sha256:<hex>` of some bytes. */
export function digestOf(bytes: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`
}

/**
 * Parses one definition file's text. Throws {@link SubagentError} `AGENT_DEFINITION_INVALID`
 * naming `file`, the 1-based line and the field (`name`, `tools[1]`, …): no front matter,
 * YAML that does not parse, a missing `name` or `description`, a value of the wrong kind.
 * Fields Keel does not use (`color`, `skills`, …) are ignored.
 */
export function parseDefinition(text: string, file: string, source: AgentDefinitionSource): AgentDefinition {
  const lines = text.split('\n')
  if ((lines[0] ?? '').replace(/\r$/u, '').trimEnd() !== '---') {
    throw invalid(file, 1, undefined, 'an agent definition starts with a --- line opening its front matter')
  }
  const close = lines.findIndex((line, i) => i > 0 && line.replace(/\r$/u, '').trimEnd() === '---')
  if (close < 0) throw invalid(file, lines.length, undefined, 'the front matter is never closed with ---')
  const yamlText = lines.slice(1, close).join('\n')
  const counter = new LineCounter()
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: true, uniqueKeys: true })
  const lineAt = (offset: number | undefined) => (offset === undefined ? 2 : counter.linePos(offset).line + 1)
  const parseError = doc.errors[0]
  if (parseError) {
    const line = (parseError.linePos?.[0]?.line ?? 1) + 1
    throw invalid(
      file,
      line,
      undefined,
      `the front matter is not valid YAML: ${parseError.message.split('\n')[0]}`,
    )
  }
  if (doc.contents !== null && !isMap(doc.contents)) {
    throw invalid(file, 2, undefined, 'the front matter must be key: value lines')
  }
  let data: unknown
  try {
    data = doc.toJS({ maxAliasCount: 20 }) ?? {}
  } catch (error) {
    throw invalid(file, 2, undefined, `the front matter cannot be read: ${errorMessage(error)}`)
  }
  const parsed = frontMatterSchema.safeParse(data)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const [key] = issue.path as Array<string | number>
    const field = formatJsonPath(issue.path.slice(0, 2))
    const node = key === undefined ? undefined : doc.getIn(issue.path as Array<string | number>, true)
    const keyNode = isMap(doc.contents)
      ? doc.contents.items.find((pair) => isScalar(pair.key) && pair.key.value === key)
      : undefined
    const offset =
      (node as { range?: [number, number, number] } | undefined)?.range?.[0] ??
      (isScalar(keyNode?.key) ? keyNode.key.range?.[0] : undefined)
    const missing = node === undefined && keyNode === undefined
    const message = boundIssues([issue]).issues[0]!.message
    const problem = missing ? `is required (${message})` : message
    throw invalid(file, missing ? 2 : lineAt(offset), field, problem)
  }
  const fm = parsed.data
  const prompt = lines
    .slice(close + 1)
    .join('\n')
    .trim()
  const model = fm.model !== undefined && !CLAUDE_MODEL_ALIASES.has(fm.model) ? fm.model : undefined
  return {
    name: fm.name,
    description: fm.description,
    ...(fm.tools === undefined ? {} : { tools: fm.tools }),
    ...(fm.disallowedTools === undefined ? {} : { disallowedTools: fm.disallowedTools }),
    ...(model === undefined ? {} : { model }),
    ...(fm.permissionMode === undefined ? {} : { permissionMode: fm.permissionMode }),
    ...(fm.approvalPolicy === undefined ? {} : { approvalPolicy: fm.approvalPolicy }),
    ...(fm.sandboxMode === undefined ? {} : { sandboxMode: fm.sandboxMode }),
    ...(fm.maxTurns === undefined ? {} : { maxTurns: fm.maxTurns }),
    prompt,
    source,
    file,
    digest: digestOf(text),
  }
}
