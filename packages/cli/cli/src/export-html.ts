import type { ContentBlock, ToolCallBlock, ToolCallId } from '@keel/llm'
import type { SessionEvent, SessionHeader } from '@keel/session'
import { titleOfEvents } from '@keel/session-title'
import type {} from '@keel/subagents'
import { type CallFacts, callHtml, indexCalls, resultHtml } from './export-calls.js'
import { durationText, escapeHtml, markdownHtml, todoHtml, usdText } from './export-parts.js'
import { EXPORT_CSS } from './export-style.js'
import { usageOf } from './json-output.js'
import { costOf, type PriceTable, priceTable } from './pricing.js'
import { oneLine } from './render.js'

/** A stored session as read for export. */
export interface ExportedSession {
  readonly header: SessionHeader
  readonly events: readonly SessionEvent[]
}

/** What the page shows besides the log. */
export interface ExportOptions {
  /** Prices for the cost total (default: the published ones). */
  readonly prices?: PriceTable
  /** The sessions of the subagents it ran, rendered after it with links both ways. */
  readonly children?: readonly ExportedSession[]
}

function plainText(content: readonly ContentBlock[]): string {
  return content
    .map((b) =>
      b.type === 'text'
        ? `<div class="text">${escapeHtml(b.text)}</div>`
        : b.type === 'image'
          ? `<img alt="image" src="data:${b.mediaType};base64,${escapeHtml(b.data)}">`
          : '',
    )
    .join('')
}

function assistantBlocks(content: readonly ContentBlock[], calls: Map<string, CallFacts>): string {
  return content
    .map((b) => {
      switch (b.type) {
        case 'text':
          return b.text.trim() === '' ? '' : markdownHtml(b.text)
        case 'reasoning':
          return `<details class="reasoning" open><summary>reasoning</summary><div>${escapeHtml(b.text)}</div></details>`
        case 'tool-call':
          return callHtml(b, calls.get(b.id))
        case 'image':
          return `<img alt="image" src="data:${b.mediaType};base64,${escapeHtml(b.data)}">`
        default:
          return ''
      }
    })
    .join('\n')
}

const note = (text: string, cls = '') => `<div class="event${cls ? ` ${cls}` : ''}">${text}</div>`

function section(
  event: SessionEvent,
  calls: Map<string, CallFacts>,
  rendered: { calls: Set<string>; todoWrites: Set<number> },
): string {
  switch (event.type) {
    case 'system/message':
      return `<details class="msg system"><summary class="who">system prompt</summary>${plainText(event.data.message.content)}</details>`
    case 'developer/message':
      return `<div class="msg developer"><div class="who">note to the model${event.data.source ? ` · ${escapeHtml(event.data.source)}` : ''}</div>${plainText(event.data.message.content)}</div>`
    case 'user/message':
      // what a direct run (`!cmd`) told the model: the run itself is shown as its call
      if (event.data.source?.startsWith('direct/'))
        return `<details class="msg developer"><summary class="who">told the model on its next call · ${escapeHtml(event.data.source)}</summary>${plainText(event.data.message.content)}</details>`
      return `<div class="msg user"><div class="who">user${event.data.source ? ` · ${escapeHtml(event.data.source)}` : ''}</div>${plainText(event.data.message.content)}</div>`
    case 'assistant/message': {
      for (const b of event.data.message.content) if (b.type === 'tool-call') rendered.calls.add(b.id)
      const u = event.data.usage
      const usage = u
        ? ` · ${u.inputTokens} in${u.cacheHitTokens ? ` (${u.cacheHitTokens} cached)` : ''} / ${u.outputTokens} out`
        : ''
      return `<div class="msg assistant"><div class="who">assistant · ${escapeHtml(event.data.stream.model)}${usage}${event.data.interrupted ? ' · interrupted' : ''}</div>${assistantBlocks(event.data.message.content, calls)}</div>`
    }
    case 'tool/direct-call': {
      const { callId, name, arguments: args, source } = event.data
      const block: ToolCallBlock = { type: 'tool-call', id: callId as ToolCallId, name, arguments: args }
      return `<div class="msg user direct"><div class="who">${source === 'user' ? 'you ran directly' : `run directly by ${escapeHtml(source)}`}</div>${callHtml(block, calls.get(callId))}</div>`
    }
    case 'tool/direct-result':
      return '' // shown with its call
    case 'tool/result':
      // shown with its call; a result whose call is not in this log stands alone
      return rendered.calls.has(event.data.message.toolCallId)
        ? ''
        : `<div class="call"><div class="call-head"><span class="tool">${escapeHtml(event.data.message.toolName)}</span></div>${resultHtml(event)}</div>`
    case 'todo/write':
      return rendered.todoWrites.has(event.seq) ? '' : todoHtml(event.data.todos)
    case 'approval/policy':
      return note(`approval policy set to <b>${escapeHtml(event.data.approvalPolicy)}</b>`, 'policy')
    case 'sandbox/mode':
      return note(`sandbox mode set to <b>${escapeHtml(event.data.sandboxMode)}</b>`, 'policy')
    case 'command/run':
      return note(
        `/${escapeHtml(event.data.name)}${event.data.args ? ` ${escapeHtml(event.data.args)}` : ''} <span class="tag">${escapeHtml(event.data.source)}</span>`,
      )
    case 'command/done':
      // what a command did is in the events it logged; only a failure is said here
      return event.data.kind === 'error'
        ? note(
            `✗ ${escapeHtml(event.data.errorCode ?? 'failed')}${event.data.text ? `: ${escapeHtml(oneLine(event.data.text, 400))}` : ''}`,
          )
        : ''
    case 'compaction/summary':
      return `<details class="msg developer"><summary class="who">compacted: the earlier conversation, summarized</summary>${plainText(event.data.summary)}</details>`
    case 'llm/retry':
      return note(
        `model call failed (${escapeHtml(event.data.error.code)}: ${escapeHtml(oneLine(event.data.error.message, 160))}); retried after ${durationText(event.data.delayMs)}`,
      )
    case 'hook/result':
      return event.data.decision === 'none'
        ? ''
        : note(
            `hook ${escapeHtml(event.data.point)} (${escapeHtml(event.data.handler)}): ${escapeHtml(event.data.decision)}`,
          )
    case 'agent/inbox/spliced':
      return event.data.inserted.length > 0
        ? note(
            `queued: ${event.data.inserted.map((m) => escapeHtml(oneLine(m.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join(''), 120))).join(' · ')}`,
          )
        : ''
    case 'turn/end': {
      const bad = event.data.reason !== 'completed'
      return `<div class="turn-end${bad ? ' bad' : ''}">turn ${event.data.turn} ${escapeHtml(event.data.reason)}${event.data.error ? `: ${escapeHtml(event.data.error.code)} ${escapeHtml(oneLine(event.data.error.message, 200))}` : ''}</div>`
    }
    case 'agent-preset/selected':
      return note(`switched to preset <b>${escapeHtml(event.data.preset)}</b>`, 'policy')
    case 'subagent/spawned':
      return `<div class="subagent">→ subagent <b>${escapeHtml(event.data.agent)}</b>: ${escapeHtml(event.data.description)} — <a href="#session-${escapeHtml(event.data.child)}">session ${escapeHtml(event.data.child)}</a></div>`
    case 'subagent/settled':
      return `<div class="turn-end">subagent <a href="#session-${escapeHtml(event.data.child)}">${escapeHtml(event.data.child)}</a> ${escapeHtml(event.data.outcome)} · ${event.data.steps} steps · ${event.data.usage.totalTokens} tokens</div>`
    default:
      return ''
  }
}

/** The events of one session as HTML, each tool call with its result. */
function bodyHtml(events: readonly SessionEvent[]): string {
  const { calls, ownedTodoWrites } = indexCalls(events)
  const rendered = { calls: new Set<string>(), todoWrites: ownedTodoWrites }
  return events
    .map((e) => section(e, calls, rendered))
    .filter((s) => s !== '')
    .join('\n')
}

/** A subagent's session, rendered after its parent's conversation with links both ways. */
function childSection(child: ExportedSession): string {
  const d = child.header.delegatedBy
  const from = d
    ? `subagent ${escapeHtml(d.agent)} · child of <a href="#session-${escapeHtml(d.session)}">session ${escapeHtml(d.session)}</a>, turn ${d.turn}, call ${escapeHtml(d.callId)}`
    : ''
  return `<section class="child" id="session-${escapeHtml(child.header.id)}">
<h2>${escapeHtml(child.header.title ?? d?.agent ?? 'subagent')} — session ${escapeHtml(child.header.id)}</h2>
<div class="meta">${from}</div>
${bodyHtml(child.events)}
</section>`
}

/** The totals of a session: turns, model calls, tokens, cost, time. */
function totalsHtml(events: readonly SessionEvent[], prices: PriceTable): string {
  const usage = usageOf(events)
  const cost = costOf(events, prices)
  const starts = new Map<number, number>()
  let active = 0
  for (const e of events) {
    if (e.type === 'turn/start') starts.set(e.data.turn, e.time)
    if (e.type === 'turn/end' && starts.has(e.data.turn)) active += e.time - starts.get(e.data.turn)!
  }
  const span = events.length > 1 ? events.at(-1)!.time - events[0]!.time : 0
  const calls = events.filter((e) => e.type === 'tool/call' || e.type === 'tool/direct-call').length
  const refused = events.filter(
    (e) => (e.type === 'tool/result' || e.type === 'tool/direct-result') && e.data.refusedBy !== undefined,
  ).length
  const cell = (value: string, label: string) => `<div><b>${value}</b><span>${label}</span></div>`
  return `<div class="totals">${[
    cell(String(events.filter((e) => e.type === 'turn/end').length), 'turns'),
    cell(String(events.filter((e) => e.type === 'assistant/message').length), 'model calls'),
    cell(`${calls}${refused > 0 ? ` (${refused} refused)` : ''}`, 'tool calls'),
    cell(
      usage.input_tokens.toLocaleString('en-US'),
      `tokens in (${usage.cache_hit_tokens.toLocaleString('en-US')} cached)`,
    ),
    cell(usage.output_tokens.toLocaleString('en-US'), 'tokens out'),
    cell(
      cost.usd === undefined ? '—' : usdText(cost.usd),
      cost.usd === undefined
        ? `cost (no price for ${escapeHtml(cost.unpriced.join(', '))})`
        : 'cost at published prices',
    ),
    cell(durationText(active), 'working'),
    cell(durationText(span), 'first to last event'),
  ].join('')}</div>`
}

/**
 * One self-contained HTML page of a session: totals (tokens, cost, time), the conversation
 * with markdown rendered, reasoning (dimmed), each tool call with its approval, its
 * arguments in the form its work reads best (an edit as a diff, a todo list as the list)
 * and its result, policy switches and commands; then the sessions of the subagents it ran
 * (`options.children`), each linked from the call that started it and linking back. Inline
 * CSS, no script, nothing loaded from elsewhere; every text from the log is escaped.
 */
export function sessionToHtml(
  header: SessionHeader,
  events: readonly SessionEvent[],
  options: ExportOptions = {},
): string {
  // The latest `session/title` (a person's wins), else the header's.
  const named = titleOfEvents(events) ?? header.title
  const title = named ? `${named} — ` : ''
  const meta = [
    `session ${header.id}`,
    new Date(header.createdAt).toISOString(),
    header.cwd ? `cwd ${header.cwd}` : '',
    header.agentPreset ? `preset ${header.agentPreset}` : '',
    header.parentSession ? `forked from ${header.parentSession}` : '',
    header.delegatedBy
      ? `subagent ${header.delegatedBy.agent} of session ${header.delegatedBy.session} (turn ${header.delegatedBy.turn}, call ${header.delegatedBy.callId})`
      : '',
  ].filter((s) => s !== '')
  const plugins = header.agentComposition?.plugins.map((p) => `${p.name}@${p.version}`).join(', ')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}Keel session ${escapeHtml(header.id)}</title>
<style>${EXPORT_CSS}</style></head><body><main>
<h1 id="session-${escapeHtml(header.id)}">${escapeHtml(title)}Keel session</h1>
<div class="meta">${meta.map(escapeHtml).join(' · ')}${plugins ? `<br>plugins ${escapeHtml(plugins)}` : ''}</div>
${totalsHtml(events, options.prices ?? priceTable())}
${bodyHtml(events)}
${(options.children ?? []).map(childSection).join('\n')}
</main></body></html>
`
}
