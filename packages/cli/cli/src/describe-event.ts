// subagent/* events are @keel/subagents' (types only)

import type { SessionEvent } from '@keel/session'
import type {} from '@keel/subagents'
import { oneLine, resultLine, summarizeArguments } from './render.js'

/** One line describing an event, for `keel sessions show`. */
export function describeEvent(event: SessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `turn ${event.data.turn}`
    case 'turn/end':
      return `turn ${event.data.turn} ${event.data.reason}${event.data.error ? ` ${event.data.error.code}: ${oneLine(event.data.error.message, 80)}` : ''}`
    case 'step/start':
    case 'step/end':
      return `turn ${event.data.turn} step ${event.data.step}`
    case 'system/message':
    case 'developer/message':
    case 'user/message': {
      const text = event.data.message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join(' ')
      return oneLine(text, 100)
    }
    case 'assistant/message': {
      const blocks = event.data.message.content
      const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
      const calls = blocks.filter((b) => b.type === 'tool-call').length
      const usage = event.data.usage
        ? ` · ${event.data.usage.inputTokens} in / ${event.data.usage.outputTokens} out`
        : ''
      const extra = [
        calls > 0 ? `${calls} tool call${calls === 1 ? '' : 's'}` : '',
        blocks.some((b) => b.type === 'reasoning') ? 'reasoning' : '',
        event.data.interrupted ? 'INTERRUPTED' : '',
      ].filter((s) => s !== '')
      return `${oneLine(text, 80) || '(no text)'}${extra.length > 0 ? ` [${extra.join(', ')}]` : ''}${usage}`
    }
    case 'assistant/attempt':
      return `attempt ${event.data.attempt} failed: ${event.data.error.code}`
    case 'tool/call':
      return `${event.data.name} ${summarizeArguments(event.data.arguments, 80)}`
    case 'tool/result':
      return `${event.data.message.toolName} ${resultLine(event.data.message, event.data.errorCode, 70).text}`
    case 'request/context': {
      const d = event.data
      const window =
        d.contextWindow === undefined
          ? ''
          : ` · window ${d.contextWindow.toLocaleString('en-US')}${d.windowSource ? ` (${d.windowSource})` : ''}`
      const output =
        d.maxOutputTokens === undefined ? '' : ` · answers ≤ ${d.maxOutputTokens.toLocaleString('en-US')}`
      return `turn ${d.turn} step ${d.step} · ${d.provider} ${d.model} (${d.modelSource})${window}${output}${d.endpoint ? ` · ${d.endpoint}` : ''}`
    }
    case 'request/header': {
      const d = event.data
      const extra = [
        `${d.tools.length} tool${d.tools.length === 1 ? '' : 's'}`,
        d.maxTokens === undefined ? '' : `max_tokens ${d.maxTokens.toLocaleString('en-US')}`,
        d.reasoningEffort === undefined ? '' : `effort ${d.reasoningEffort}`,
        d.temperature === undefined ? '' : `temperature ${d.temperature}`,
      ].filter((s) => s !== '')
      return `turn ${d.turn} step ${d.step} · ${extra.join(' · ')}`
    }
    case 'subagent/spawned':
      return `${event.data.agent} in session ${event.data.child} for ${event.data.callId} (keel sessions show ${event.data.child})`
    case 'subagent/settled':
      return `${event.data.child} ${event.data.outcome} · ${event.data.steps} steps · ${event.data.usage.totalTokens} tokens${event.data.error ? ` ${event.data.error.code}` : ''}`
    case 'agent/inbox/spliced': {
      const d = event.data
      const added = d.inserted.map((m) =>
        oneLine(m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), 40),
      )
      const removed = d.removedCount
        ? `${d.outcome === 'canceled' ? 'withdrew' : 'took'} ${d.removedCount} at ${d.start}`
        : ''
      return [removed, added.length > 0 ? `queued ${added.map((a) => JSON.stringify(a)).join(', ')}` : '']
        .filter((s) => s !== '')
        .join('; ')
    }
    default:
      return oneLine(JSON.stringify(event.data), 100)
  }
}
