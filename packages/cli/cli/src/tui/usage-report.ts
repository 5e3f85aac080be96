import type { Agent } from '@keel/agent'
import type { Message } from '@keel/llm'
import { z } from 'zod'
import { dollars, type SessionUsage, shortCount } from '../session-usage.js'

const pad = (text: string, width: number) => text.padEnd(width)

/** `/cost`: the session's model calls, tokens and cost, per model and in total. */
export function costReport(usage: SessionUsage): string {
  if (usage.total.calls === 0) return 'no model call yet: nothing spent'
  const rows: string[][] = [['model', 'calls', 'input', 'cached', 'output', 'cost']]
  const row = (name: string, t: SessionUsage['total']) => [
    name,
    String(t.calls),
    shortCount(t.inputTokens),
    shortCount(t.cacheHitTokens),
    shortCount(t.outputTokens),
    dollars(t.costUsd),
  ]
  for (const [model, totals] of usage.byModel) rows.push(row(model, totals))
  if (usage.byModel.size > 1) rows.push(row('total', usage.total))
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)) + 2)
  const table = rows.map((r) =>
    r
      .map((cell, i) => pad(cell, widths[i]!))
      .join('')
      .trimEnd(),
  )
  const notes = [
    'Cost at the model’s published prices (each call at the tier in force when it started); a preset’s `prices` override them.',
  ]
  if (usage.unpriced.length > 0)
    notes.push(
      `No price known for ${usage.unpriced.join(', ')}: counted at $0 (add it to the preset's \`prices\`).`,
    )
  return [...table, ...notes].join('\n')
}

/** Rough tokens of a text (about four characters each): for proportions, not billing. */
const estimate = (chars: number) => Math.ceil(chars / 4)

function charsOf(message: Message): number {
  let chars = 0
  for (const block of message.content) {
    if (block.type === 'text' || block.type === 'reasoning') chars += block.text.length
    else if (block.type === 'tool-call') chars += block.name.length + block.arguments.length
    else chars += 1000 // an image: a fixed guess
  }
  return chars
}

/** `/context`: how full the next call's model window is, and what that call would send, by kind. */
export function contextReport(agent: Agent, usage: SessionUsage): string {
  const { contextWindow } = agent.model()
  const messages = agent.session.deriveMessages()
  const byRole = new Map<string, { count: number; chars: number }>()
  for (const message of messages) {
    const entry = byRole.get(message.role) ?? { count: 0, chars: 0 }
    entry.count++
    entry.chars += charsOf(message)
    byRole.set(message.role, entry)
  }
  const toolChars = agent.tools.reduce(
    (sum, t) =>
      sum + t.name.length + t.description.length + JSON.stringify(z.toJSONSchema(t.inputSchema)).length,
    0,
  )
  const lines: string[] = []
  const window = contextWindow ? ` of ${shortCount(contextWindow)}` : ''
  if (usage.lastContextTokens === undefined) lines.push(`context window${window}: no model call yet`)
  else {
    const share = contextWindow ? ` (${((usage.lastContextTokens / contextWindow) * 100).toFixed(1)}%)` : ''
    lines.push(`last call used ${usage.lastContextTokens.toLocaleString('en-US')} tokens${window}${share}`)
  }
  lines.push('the next call would send (estimated at ~4 characters a token):')
  for (const [role, { count, chars }] of byRole)
    lines.push(
      `  ${pad(`${role} messages`, 20)} ${pad(String(count), 6)} ~${shortCount(estimate(chars))} tokens`,
    )
  lines.push(
    `  ${pad('tool definitions', 20)} ${pad(String(agent.tools.length), 6)} ~${shortCount(estimate(toolChars))} tokens`,
  )
  return lines.join('\n')
}
