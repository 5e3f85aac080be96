import { describe, expect, it } from 'vitest'
import { presetView, resolvePreset, BUILTIN_PERMISSION_PRESETS as shipped } from '../src/index.js'

describe('resolvePreset', () => {
  it.each([
    ['auto-edit', 'auto-edit'],
    ['full-auto', 'auto-edit'],
    ['acceptEdits', 'auto-edit'],
    ['yolo', 'full-access'],
    ['bypassPermissions', 'full-access'],
    [' READ-ONLY ', 'read-only'],
  ])('%s → %s', (name, canonical) => {
    expect(resolvePreset(shipped, name).name).toBe(canonical)
  })

  it('refuses an unknown name with the known ones, and points plan to /plan', () => {
    expect(() => resolvePreset(shipped, 'sudo')).toThrow(
      'no permission preset "sudo"; presets: read-only, ask-always, auto-edit, full-access',
    )
    expect(() => resolvePreset(shipped, 'plan')).toThrow('(plan mode is its own: /plan, keel --plan)')
    expect(() => resolvePreset(shipped, 'toString')).toThrow(/PERMISSION_PRESET_UNKNOWN|no permission preset/)
  })

  it('does not echo a pasted megabyte back whole, in the message or its details', () => {
    let refused: unknown
    try {
      resolvePreset(shipped, 'z'.repeat(1_000_000))
    } catch (error) {
      refused = error
    }
    expect(refused).toMatchObject({ code: 'PERMISSION_PRESET_UNKNOWN' })
    expect((refused as Error).message).toMatch(/^no permission preset "z+…\[/)
    expect(JSON.stringify(refused).length + (refused as Error).message.length).toBeLessThan(2_000)
  })
})

describe('presetView', () => {
  const auto = { approvalPolicy: 'on_request', sandboxMode: 'workspace_write' } as const
  const cases: Array<[string, string | undefined, Parameters<typeof presetView>[2], string, boolean]> = [
    ['nothing picked, the default matches auto-edit', undefined, auto, 'auto-edit', false],
    ['picked and still in force', 'auto-edit', auto, 'auto-edit', true],
    ['picked, then /policy strict', 'auto-edit', { ...auto, approvalPolicy: 'strict' }, 'ask-always', false],
    [
      'picked, then knobs no preset has',
      'auto-edit',
      { approvalPolicy: 'never', sandboxMode: 'read_only' },
      'custom',
      false,
    ],
    ['a pick of a preset no longer configured', 'mine', auto, 'auto-edit', false],
  ]
  it.each(cases)('%s', (_name, selected, knobs, name, picked) => {
    expect(presetView(shipped, selected, knobs)).toEqual({ name, picked, ...knobs })
  })
})
