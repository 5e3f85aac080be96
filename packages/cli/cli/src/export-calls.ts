// Tool calls in the HTML export: each call with what became of it — the approval asked and
// its answer, arguments a plugin rewrote, the result — rendered by what the tool does: an
// edit as a diff, a written file as its content, a shell command as a command line, a todo
// list as the list.
import type { ToolCallBlock } from '@keel/llm'
import type { SessionEvent } from '@keel/session'
import {
  argumentsOf,
  diffHtml,
  escapeHtml,
  preHtml,
  prettyJson,
  statsHtml,
  type TodoLike,
  todoHtml,
} from './export-parts.js'
import { oneLine, summarizeArguments } from './render.js'
import { toolOutcome } from './result-view.js'

/** A call's result: a model call's `tool/result`, or a direct run's (`!cmd`) `tool/direct-result`. */
export type ResultEvent = SessionEvent<'tool/result'> | SessionEvent<'tool/direct-result'>

/** What the log says became of one call. */
export interface CallFacts {
  result?: ResultEvent
  asked: SessionEvent<'approval/asked'>[]
  decided: Map<string, SessionEvent<'approval/decided'>>
  rewritten?: SessionEvent<'tool/input-rewritten'>
  /** The list a `todo_write` call wrote (the `todo/write` between its call and its result). */
  todos?: SessionEvent<'todo/write'>
}

/** The facts of every call, by call id; and which `todo/write` events belong to a call. */
export function indexCalls(events: readonly SessionEvent[]): {
  calls: Map<string, CallFacts>
  ownedTodoWrites: Set<number>
} {
  const calls = new Map<string, CallFacts>()
  const ownedTodoWrites = new Set<number>()
  const facts = (id: string) => {
    let f = calls.get(id)
    if (!f) {
      f = { asked: [], decided: new Map() }
      calls.set(id, f)
    }
    return f
  }
  const askedBy = new Map<string, string>()
  let openTodoCall: string | undefined
  for (const event of events) {
    switch (event.type) {
      case 'tool/call':
        facts(event.data.callId)
        if (event.data.name === 'todo_write') openTodoCall = event.data.callId
        break
      case 'tool/result':
        facts(event.data.message.toolCallId).result = event
        if (openTodoCall === event.data.message.toolCallId) openTodoCall = undefined
        break
      case 'tool/direct-call':
        facts(event.data.callId)
        break
      case 'tool/direct-result':
        facts(event.data.callId).result = event
        break
      case 'approval/asked':
        facts(event.data.callId).asked.push(event)
        askedBy.set(event.data.id, event.data.callId)
        break
      case 'approval/decided': {
        const call = askedBy.get(event.data.id)
        if (call !== undefined) facts(call).decided.set(event.data.id, event)
        break
      }
      case 'tool/input-rewritten':
        facts(event.data.callId).rewritten = event
        break
      case 'todo/write':
        if (openTodoCall !== undefined) {
          facts(openTodoCall).todos = event
          ownedTodoWrites.add(event.seq)
          openTodoCall = undefined
        }
        break
      default:
    }
  }
  return { calls, ownedTodoWrites }
}

const str = (args: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof args?.[key] === 'string' ? (args[key] as string) : undefined

/** The body of a call: what it asked for, in the form the tool's work reads best. */
function callBody(name: string, raw: string, facts: CallFacts | undefined): { head: string; body: string } {
  const args = argumentsOf(raw)
  const path = str(args, 'path')
  if (name === 'edit_file' && path !== undefined && str(args, 'oldString') !== undefined) {
    const { html, stats } = diffHtml(str(args, 'oldString')!, str(args, 'newString') ?? '')
    const all = args?.replaceAll === true ? ' <span class="tag">every occurrence</span>' : ''
    return { head: `<code>${escapeHtml(path)}</code> ${statsHtml(stats)}${all}`, body: html }
  }
  if (name === 'write_file' && path !== undefined && str(args, 'content') !== undefined) {
    const { html, stats } = diffHtml('', str(args, 'content')!)
    return {
      head: `<code>${escapeHtml(path)}</code> ${statsHtml(stats)} <span class="tag">whole file</span>`,
      body: html,
    }
  }
  if (name === 'bash' && str(args, 'command') !== undefined) {
    return {
      head: '',
      body: `<pre class="cmd"><span class="prompt">$</span> ${escapeHtml(str(args, 'command')!)}</pre>`,
    }
  }
  if (name === 'todo_write') {
    const todos =
      facts?.todos?.data.todos ?? (Array.isArray(args?.todos) ? (args.todos as TodoLike[]) : undefined)
    if (todos) return { head: '', body: todoHtml(todos) }
  }
  const summary = summarizeArguments(raw, 140)
  if (summary.length < 140 && !raw.includes('\\n'))
    return { head: `<span class="args">${escapeHtml(summary)}</span>`, body: '' }
  return {
    head: '',
    body: `<details class="args"><summary>arguments</summary>${preHtml(prettyJson(raw))}</details>`,
  }
}

function ruleText(rule: NonNullable<SessionEvent<'approval/decided'>['data']['rule']>): string {
  if (rule.command !== undefined) return `${rule.toolName} \`${rule.command}\` (this exact command)`
  if (rule.path !== undefined) return `${rule.toolName} under ${rule.path}`
  return `every ${rule.toolName} call`
}

const OUTCOME: Record<string, string> = {
  'allowed-once': 'allowed once',
  'allowed-session': 'allowed for this session',
  rejected: 'rejected',
  cancelled: 'cancelled (the turn ended)',
  unavailable: 'nobody could answer: refused',
}

/** The approval questions about a call and their answers. */
function approvalsHtml(facts: CallFacts): string {
  return facts.asked
    .map((asked) => {
      const decided = facts.decided.get(asked.data.id)?.data
      const who = decided
        ? decided.by === 'user'
          ? `the user${decided.answerer ? ` (${decided.answerer})` : ''}`
          : decided.by === 'session-rule'
            ? 'a rule of this session'
            : decided.by === 'hook'
              ? `a hook${decided.answerer ? ` (${decided.answerer})` : ''}`
              : ''
        : ''
      const outcome = decided ? (OUTCOME[decided.outcome] ?? decided.outcome) : 'no answer recorded'
      const cls = decided?.outcome.startsWith('allowed') ? 'ok' : 'no'
      const extra = [
        decided?.rule ? `rule: ${escapeHtml(ruleText(decided.rule))}` : '',
        decided?.reason ? `“${escapeHtml(decided.reason)}”` : '',
      ].filter((s) => s !== '')
      return `<div class="approval ${cls}"><span class="q">asked${asked.data.plugin ? ` by ${escapeHtml(asked.data.plugin)}` : ''}:</span> ${escapeHtml(asked.data.reason)}<br><span class="a">→ ${escapeHtml(outcome)}${who ? ` by ${escapeHtml(who)}` : ''}</span>${extra.length > 0 ? ` · ${extra.join(' · ')}` : ''}</div>`
    })
    .join('')
}

/** A tool result: errors open, short output inline, long output folded with its size. */
export function resultHtml(result: ResultEvent): string {
  const m = result.data.message
  const images = m.content
    .filter((b) => b.type === 'image')
    .map((b) => `<img alt="tool image" src="data:${b.mediaType};base64,${escapeHtml(b.data)}">`)
  const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
  const refused = result.data.refusedBy
    ? ` <span class="tag">refused by ${escapeHtml(result.data.refusedBy)}</span>`
    : ''
  const outcome = toolOutcome(m, result.data.errorCode)
  if (outcome.failed)
    return `<div class="result error"><span class="status">${escapeHtml(outcome.mark)}</span>${refused}${preHtml(text)}${images.join('')}</div>`
  const lines = text === '' ? 0 : text.split('\n').length
  const aside = result.data.storedAside
    ? ` <span class="note">(the model saw a part; all ${result.data.storedAside.chars} characters are in ${escapeHtml(result.data.storedAside.path)})</span>`
    : ''
  if (text.trim() === '' && images.length === 0)
    return `<div class="result"><span class="status">✓ (no output)</span></div>`
  if (lines <= 12 && text.length <= 1500)
    return `<div class="result"><span class="status">✓</span>${aside}${preHtml(text)}${images.join('')}</div>`
  return `<details class="result"><summary><span class="status">✓</span> ${lines} lines of output · ${escapeHtml(oneLine(text, 90))}${aside}</summary>${preHtml(text)}${images.join('')}</details>`
}

/** One call: its header, the approval and its answer, what it asked for, and its result. */
export function callHtml(block: ToolCallBlock, facts: CallFacts | undefined): string {
  const raw = facts?.rewritten?.data.arguments ?? block.arguments
  const { head, body } = callBody(block.name, raw, facts)
  const rewritten = facts?.rewritten
    ? `<div class="note">arguments rewritten by ${escapeHtml(facts.rewritten.data.plugin)} (what ran is shown; the model sent ${escapeHtml(oneLine(block.arguments, 120))})</div>`
    : ''
  const result = facts?.result
    ? resultHtml(facts.result)
    : '<div class="result pending">no result recorded (the turn ended first)</div>'
  const state = facts?.result?.data.errorCode ? ' failed' : ''
  return `<div class="call${state}" id="call-${escapeHtml(block.id)}"><div class="call-head"><span class="tool">${escapeHtml(block.name)}</span> ${head}</div>${facts ? approvalsHtml(facts) : ''}${rewritten}${body}${result}</div>`
}
