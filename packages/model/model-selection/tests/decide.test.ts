import type { ModelInfo } from '@keel/agent'
import { describe, expect, it } from 'vitest'
import { decideSelection, type SelectionFacts, type SelectionRequest } from '../src/index.js'

const pro: ModelInfo = {
  model: 'deepseek-v4-pro',
  contextWindow: 1_048_576,
  windowSource: 'adapter',
  maxOutputTokens: 384_000,
  reasoning: true,
  reasoningEfforts: ['low', 'high', 'max'],
}
const chat: ModelInfo = {
  model: 'deepseek-chat',
  contextWindow: 128_000,
  windowSource: 'adapter',
  reasoning: false,
  reasoningEfforts: [],
}
const unknownWindow: ModelInfo = { model: 'mystery', reasoning: false, reasoningEfforts: [] }

const onDefault = (info: ModelInfo): SelectionFacts => ({
  current: { model: 'deepseek-v4-flash' },
  selected: false,
  defaultModel: 'deepseek-v4-flash',
  info,
})
const onPro = (info: ModelInfo, effort?: string): SelectionFacts => ({
  current:
    effort === undefined
      ? { model: 'deepseek-v4-pro' }
      : { model: 'deepseek-v4-pro', reasoningEffort: effort },
  selected: true,
  defaultModel: 'deepseek-v4-flash',
  info,
})
const ask = (model: string | null, reasoningEffort?: string): SelectionRequest =>
  reasoningEffort === undefined ? { model, source: 'user' } : { model, reasoningEffort, source: 'user' }

describe('decideSelection', () => {
  it.each([
    [
      'a model with its effort, carrying the window it brings',
      ask('deepseek-v4-pro', 'high'),
      onDefault(pro),
      {
        action: 'select',
        data: {
          model: 'deepseek-v4-pro',
          reasoningEffort: 'high',
          contextWindow: 1_048_576,
          source: 'user',
          previous: 'deepseek-v4-flash',
        },
      },
    ],
    [
      'a model without effort',
      ask('deepseek-chat'),
      onDefault(chat),
      {
        action: 'select',
        data: {
          model: 'deepseek-chat',
          contextWindow: 128_000,
          source: 'user',
          previous: 'deepseek-v4-flash',
        },
      },
    ],
    [
      'a model nothing knows the window of: no window recorded',
      ask('mystery'),
      onDefault(unknownWindow),
      { action: 'select', data: { model: 'mystery', source: 'user', previous: 'deepseek-v4-flash' } },
    ],
    [
      'the same model and effort again',
      ask('deepseek-v4-pro', 'high'),
      onPro(pro, 'high'),
      { action: 'unchanged' },
    ],
    [
      'the same model with another effort',
      ask('deepseek-v4-pro', 'max'),
      onPro(pro, 'high'),
      { action: 'select', data: { model: 'deepseek-v4-pro', reasoningEffort: 'max' } },
    ],
    [
      'an effort for a model without levels',
      ask('deepseek-chat', 'high'),
      onDefault(chat),
      { action: 'refuse', code: 'MODEL_EFFORT_UNSUPPORTED' },
    ],
    [
      'an effort the model does not take',
      ask('deepseek-v4-pro', 'medium'),
      onDefault(pro),
      { action: 'refuse', code: 'MODEL_EFFORT_INVALID' },
    ],
    [
      'an id with a space',
      ask('deepseek v4'),
      onDefault(chat),
      { action: 'refuse', code: 'MODEL_ID_INVALID' },
    ],
    ['an empty id', ask(''), onDefault(chat), { action: 'refuse', code: 'MODEL_ID_INVALID' }],
    [
      'an id of 201 characters',
      ask('m'.repeat(201)),
      onDefault(chat),
      { action: 'refuse', code: 'MODEL_ID_INVALID' },
    ],
    [
      'back to the default from a selection',
      ask(null),
      onPro({ ...pro, model: 'deepseek-v4-flash', contextWindow: 1_048_576 }),
      { action: 'select', data: { model: 'deepseek-v4-flash', default: true, previous: 'deepseek-v4-pro' } },
    ],
    ['back to the default without a selection', ask(null), onDefault(pro), { action: 'unchanged' }],
  ] as const)('%s', (_, request, facts, expected) => {
    expect(decideSelection(request, facts)).toMatchObject(expected)
  })

  it('names the levels a model takes when refusing an effort', () => {
    const decision = decideSelection(ask('deepseek-v4-pro', 'medium'), onDefault(pro))
    expect(decision).toMatchObject({
      reason: "deepseek-v4-pro takes reasoning effort low, high, max; not 'medium'",
    })
  })
})
