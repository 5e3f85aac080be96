import type { ContentBlock } from '@keel/llm'
import type { SessionEvent, SessionHeader } from '@keel/session'
import { titleOfEvents } from '@keel/session-title'
import type {} from '@keel/subagents'

const MAX_RESULT_CHARS = 20_000

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (c) => `&#${c.charCodeAt(0)};`)
}

function pretty(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2)
  } catch {
    return raw
  }
}

function clip(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return escapeHtml(text)
  return `${escapeHtml(text.slice(0, MAX_RESULT_CHARS))}\n<span class="note">… ${text.length - MAX_RESULT_CHARS} more characters (the full text is in the session log)</span>`
}

function blocks(content: readonly ContentBlock[]): string {
  return content
    .map((b) => {
      switch (b.type) {
        case 'text':
          return `<div class="text">${escapeHtml(b.text)}</div>`
        case 'reasoning':
          return `<details class="reasoning" open><summary>reasoning</summary><div>${escapeHtml(b.text)}</div></details>`
        case 'tool-call':
          return `<div class="call"><span class="tool">→ ${escapeHtml(b.name)}</span> <span class="id">${escapeHtml(b.id)}</span><pre>${escapeHtml(pretty(b.arguments))}</pre></div>`
        case 'image':
          return `<img alt="image" src="data:${b.mediaType};base64,${escapeHtml(b.data)}">`
        default:
          return ''
      }
    })
    .join('\n')
}

function section(event: SessionEvent): string {
  switch (event.type) {
    case 'system/message':
      return `<details class="msg system"><summary>system prompt</summary>${blocks(event.data.message.content)}</details>`
    case 'developer/message':
      return `<div class="msg developer"><div class="who">developer${event.data.source ? ` · ${escapeHtml(event.data.source)}` : ''}</div>${blocks(event.data.message.content)}</div>`
    case 'user/message':
      return `<div class="msg user"><div class="who">user${event.data.source ? ` · ${escapeHtml(event.data.source)}` : ''}</div>${blocks(event.data.message.content)}</div>`
    case 'assistant/message': {
      const usage = event.data.usage
        ? ` · ${event.data.usage.inputTokens} in / ${event.data.usage.outputTokens} out`
        : ''
      return `<div class="msg assistant"><div class="who">assistant${usage}${event.data.interrupted ? ' · interrupted' : ''}</div>${blocks(event.data.message.content)}</div>`
    }
    case 'tool/result': {
      const m = event.data.message
      const text = m.content.map((b) => (b.type === 'text' ? b.text : `[${b.mediaType} image]`)).join('\n')
      const status = event.data.errorCode ? `✗ ${escapeHtml(event.data.errorCode)}` : '✓'
      return `<div class="result${event.data.errorCode ? ' error' : ''}"><span class="tool">← ${escapeHtml(m.toolName)} ${status}</span><pre>${clip(text)}</pre></div>`
    }
    case 'turn/end':
      return `<div class="turn-end">turn ${event.data.turn} ${escapeHtml(event.data.reason)}${event.data.error ? `: ${escapeHtml(event.data.error.code)} ${escapeHtml(event.data.error.message)}` : ''}</div>`
    case 'agent-preset/selected':
      return `<div class="turn-end">switched to preset ${escapeHtml(event.data.preset)}</div>`
    case 'subagent/spawned':
      return `<div class="subagent">→ subagent <b>${escapeHtml(event.data.agent)}</b>: ${escapeHtml(event.data.description)} — <a href="#session-${escapeHtml(event.data.child)}">session ${escapeHtml(event.data.child)}</a></div>`
    case 'subagent/settled':
      return `<div class="turn-end">subagent <a href="#session-${escapeHtml(event.data.child)}">${escapeHtml(event.data.child)}</a> ${escapeHtml(event.data.outcome)} · ${event.data.steps} steps · ${event.data.usage.totalTokens} tokens</div>`
    default:
      return ''
  }
}

/** A stored session as read for export. */
export interface ExportedSession {
  readonly header: SessionHeader
  readonly events: readonly SessionEvent[]
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
${child.events
  .map(section)
  .filter((s) => s !== '')
  .join('\n')}
</section>`
}

/**
 * One self-contained HTML page of a session: the conversation, reasoning (expanded,
 * dimmed), tool calls with their arguments and results (long output clipped with a note),
 * turn ends; then the sessions of the subagents it ran (`children`), each linked from the
 * call that started it and linking back. Inline CSS, no script, no external resource;
 * every text is escaped.
 */
export function sessionToHtml(
  header: SessionHeader,
  events: readonly SessionEvent[],
  children: readonly ExportedSession[] = [],
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
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)}Keel session ${escapeHtml(header.id)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#1b1b1b;background:#fafafa}
h1{font-size:1.3em;margin-bottom:.2em}.meta{color:#666;font-size:.85em;margin-bottom:1.5em}
.msg{border-radius:8px;padding:.6em .9em;margin:.8em 0;background:#fff;border:1px solid #e3e3e3}
.user{background:#eef5ff;border-color:#c9dcf5}.system,.developer{background:#f4f4f4;color:#555}
.who{font-size:.75em;text-transform:uppercase;letter-spacing:.05em;color:#888;margin-bottom:.3em}
.text{white-space:pre-wrap}.reasoning{color:#888;font-style:italic;margin:.3em 0}
.reasoning div{white-space:pre-wrap}.call,.result{margin:.4em 0}.tool{font-family:ui-monospace,monospace;font-weight:600;color:#0a5}
.result.error .tool{color:#c22}.id{color:#aaa;font-size:.8em}
pre{background:#f6f8fa;border:1px solid #e5e5e5;border-radius:6px;padding:.5em;overflow-x:auto;white-space:pre-wrap;font-size:.85em;margin:.3em 0}
.turn-end{color:#999;font-size:.8em;text-align:center;margin:1em 0}.note{color:#a60}
.subagent{margin:.4em 0;font-size:.9em}.child{border-top:2px solid #ddd;margin-top:2.5em;padding-top:.5em}h2{font-size:1.1em}
</style></head><body>
<h1 id="session-${escapeHtml(header.id)}">${escapeHtml(title)}Keel session</h1>
<div class="meta">${meta.map(escapeHtml).join(' · ')}${plugins ? `<br>plugins ${escapeHtml(plugins)}` : ''}</div>
${events
  .map(section)
  .filter((s) => s !== '')
  .join('\n')}
${children.map(childSection).join('\n')}
</body></html>
`
}
