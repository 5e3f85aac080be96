import { chmodSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import { describe, expect, it } from 'vitest'
import {
  HOOK_SOURCES,
  type HookError,
  type HookLocations,
  type HookSourceId,
  loadHooks,
} from '../src/index.js'
import { tempDir, writeFile, writeJson } from './helpers.js'

function locations(): HookLocations {
  const root = tempDir()
  return {
    projectDir: join(root, 'project'),
    home: join(root, 'home'),
    keelHome: join(root, 'keel-home'),
    codexHome: join(root, 'codex-home'),
  }
}

const all = HOOK_SOURCES.map((s) => s.id)
const handler = (command: string, extra: Record<string, unknown> = {}) => ({
  type: 'command',
  command,
  ...extra,
})
const settings = (event: string, command: string, matcher?: string) => ({
  hooks: { [event]: [{ ...(matcher === undefined ? {} : { matcher }), hooks: [handler(command)] }] },
})

function expectHookError(fn: () => unknown, code: string, file: string, path: string): HookError {
  try {
    fn()
  } catch (error) {
    expect(isKeelError(error, code)).toBe(true)
    const e = error as HookError
    expect(e.details.file).toBe(file)
    expect(e.details.path).toBe(path)
    expect(e.message).toContain(file)
    return e
  }
  throw new Error('expected a HookError')
}

describe('loading hook settings', () => {
  it('reads every source in precedence order, concatenating lists, with dialects and ids', () => {
    const at = locations()
    writeJson(at.keelHome, 'settings.json', settings('PreToolUse', 'keel-user'))
    writeJson(at.projectDir, '.keel/settings.json', settings('PreToolUse', 'keel-project'))
    writeJson(at.home, '.claude/settings.json', {
      model: 'x',
      ...settings('PreToolUse', 'claude-user', 'Bash'),
    })
    writeJson(at.projectDir, '.claude/settings.json', settings('PreToolUse', 'claude-project'))
    writeJson(at.projectDir, '.claude/settings.local.json', settings('Stop', 'claude-local'))
    writeJson(at.codexHome, 'hooks.json', settings('PreToolUse', 'codex-user'))
    writeJson(at.projectDir, '.codex/hooks.json', {
      hooks: { PreToolUse: [{ hooks: [handler('codex-project', { timeoutSec: 5 })] }] },
    })
    const loaded = loadHooks({ sources: all, locations: at, inline: settings('SessionEnd', 'inline').hooks })
    expect(loaded.handlers.map((h) => [h.command, h.source, h.dialect, h.point])).toEqual([
      ['keel-user', 'keel-user', 'keel', 'PreToolUse'],
      ['keel-project', 'keel-project', 'keel', 'PreToolUse'],
      ['claude-user', 'claude-user', 'claude', 'PreToolUse'],
      ['claude-project', 'claude-project', 'claude', 'PreToolUse'],
      ['claude-local', 'claude-local', 'claude', 'Stop'],
      ['codex-user', 'codex-user', 'codex', 'PreToolUse'],
      ['codex-project', 'codex-project', 'codex', 'PreToolUse'],
      ['inline', 'inline', 'keel', 'SessionEnd'],
    ])
    expect(loaded.handlers[2]).toMatchObject({
      id: 'claude-user:hooks.PreToolUse[0].hooks[0]',
      matcher: 'Bash',
    })
    expect(loaded.handlers[6]!.timeoutSeconds).toBe(5)
    expect(loaded.files).toHaveLength(7)
  })

  it('reads only the selected sources; missing files are fine', () => {
    const at = locations()
    writeJson(at.projectDir, '.claude/settings.json', settings('PreToolUse', 'claude-project'))
    writeJson(at.projectDir, '.codex/hooks.json', settings('PreToolUse', 'codex-project'))
    const only: HookSourceId[] = ['codex-project', 'keel-user']
    expect(loadHooks({ sources: only, locations: at }).handlers.map((h) => h.command)).toEqual([
      'codex-project',
    ])
    expect(loadHooks({ sources: [], locations: at }).handlers).toEqual([])
  })

  it('deduplicates identical Keel / Claude Code handlers across files but runs every Codex copy', () => {
    const at = locations()
    writeJson(at.home, '.claude/settings.json', settings('PreToolUse', 'guard.sh', 'Bash'))
    writeJson(at.projectDir, '.claude/settings.json', settings('PreToolUse', 'guard.sh', 'Bash'))
    writeJson(at.codexHome, 'hooks.json', settings('PreToolUse', 'guard.sh', 'Bash'))
    writeJson(at.projectDir, '.codex/hooks.json', settings('PreToolUse', 'guard.sh', 'Bash'))
    const loaded = loadHooks({ sources: all, locations: at })
    expect(loaded.handlers.map((h) => h.source)).toEqual(['claude-user', 'codex-user', 'codex-project'])
    expect(loaded.warnings.join('\n')).toContain('runs once')
  })

  it('skips events Keel does not fire and non-command handlers, with warnings', () => {
    const at = locations()
    writeJson(at.projectDir, '.claude/settings.json', {
      hooks: {
        Notification: [{ hooks: [handler('notify')] }],
        PreToolUse: [{ hooks: [{ type: 'prompt', prompt: 'judge it' }, handler('kept')] }],
      },
    })
    const loaded = loadHooks({ sources: all, locations: at })
    expect(loaded.handlers.map((h) => h.command)).toEqual(['kept'])
    expect(loaded.warnings).toHaveLength(2)
    expect(loaded.warnings[0]).toContain('hooks.Notification')
    expect(loaded.warnings[1]).toContain('hooks.PreToolUse[0].hooks[0]: handler type "prompt"')
  })

  it('honours disableAllHooks from a Keel or Claude Code file: the user’s at once, the project’s once its settings are in force', () => {
    const at = locations()
    writeJson(at.projectDir, '.claude/settings.json', settings('PreToolUse', 'guard'))
    writeJson(at.projectDir, '.claude/settings.local.json', { disableAllHooks: true })
    const project = loadHooks({ sources: all, locations: at })
    expect(project).toMatchObject({ disabled: false, projectDisabled: true })
    expect(project.handlers.map((h) => h.command)).toEqual(['guard'])
    writeJson(at.keelHome, 'settings.json', { disableAllHooks: true })
    expect(loadHooks({ sources: all, locations: at })).toMatchObject({ disabled: true, handlers: [] })
  })

  it('refuses a file that is not JSON, naming the file', () => {
    const at = locations()
    writeJson(at.projectDir, '.keel/settings.json', settings('PreToolUse', 'fine'))
    const file = writeFile(at.projectDir, '.claude/settings.json', '{ "hooks": { ')
    expectHookError(() => loadHooks({ sources: all, locations: at }), 'HOOK_CONFIG_INVALID', file, '(file)')
  })

  it('refuses a bad layout, naming the file and the JSON path; nothing is half-loaded', () => {
    const at = locations()
    writeJson(at.projectDir, '.keel/settings.json', settings('PreToolUse', 'fine'))
    const file = writeJson(at.projectDir, '.claude/settings.json', {
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [handler('ok'), handler('slow', { timeout: -3 })] }] },
    })
    let loaded: unknown
    const error = expectHookError(
      () => {
        loaded = loadHooks({ sources: all, locations: at })
      },
      'HOOK_CONFIG_INVALID',
      file,
      'hooks.PreToolUse[0].hooks[1].timeout',
    )
    expect(loaded).toBeUndefined()
    expect(error.message).toContain('hooks.PreToolUse[0].hooks[1].timeout')

    const missing = writeJson(at.projectDir, '.claude/settings.json', {
      hooks: { Stop: [{ hooks: [{ type: 'command' }] }] },
    })
    expectHookError(
      () => loadHooks({ sources: all, locations: at }),
      'HOOK_CONFIG_INVALID',
      missing,
      'hooks.Stop[0].hooks[0].command',
    )
    const notList = writeJson(at.projectDir, '.claude/settings.json', { hooks: { Stop: { hooks: [] } } })
    expectHookError(
      () => loadHooks({ sources: all, locations: at }),
      'HOOK_CONFIG_INVALID',
      notList,
      'hooks.Stop',
    )
  })

  it('bounds a megabyte key and thousands of issues in the error text', () => {
    const at = locations()
    const huge = 'E'.repeat(1 << 20)
    const hooks: Record<string, unknown> = { [huge]: 'not a list' }
    for (let i = 0; i < 2_000; i++) hooks[`Event${i}`] = 'not a list'
    const file = writeJson(at.projectDir, '.claude/settings.json', { hooks })
    let error: HookError | undefined
    try {
      loadHooks({ sources: all, locations: at })
    } catch (e) {
      error = e as HookError
    }
    expect(isKeelError(error, 'HOOK_CONFIG_INVALID')).toBe(true)
    expect(error!.message).toContain(file)
    expect(error!.message).toContain('characters elided')
    expect(error!.message).toContain('(and 2000 more)')
    expect(error!.message.length).toBeLessThan(1_000)
    expect(String(error!.details.path).startsWith('hooks.EEE')).toBe(true)
    expect((error!.details.issues as unknown[]).length).toBe(10)
    expect(JSON.stringify(error!.details).length).toBeLessThan(10_000)
  })

  it('refuses an invalid regular expression matcher, naming its path', () => {
    const at = locations()
    const file = writeJson(at.codexHome, 'hooks.json', settings('PostToolUse', 'x', 'Edit(('))
    expectHookError(
      () => loadHooks({ sources: all, locations: at }),
      'HOOK_MATCHER_INVALID',
      file,
      'hooks.PostToolUse[0].matcher',
    )
  })

  it('refuses an unreadable file with its own code', () => {
    if (process.getuid?.() === 0) {
      // root reads everything: use a directory in place of the file instead
      const at = locations()
      const file = join(at.projectDir, '.claude', 'settings.json')
      mkdirSync(file, { recursive: true })
      expectHookError(
        () => loadHooks({ sources: all, locations: at }),
        'HOOK_CONFIG_UNREADABLE',
        file,
        '(file)',
      )
      return
    }
    const at = locations()
    const file = writeJson(at.projectDir, '.claude/settings.json', {})
    chmodSync(file, 0o000)
    expectHookError(
      () => loadHooks({ sources: all, locations: at }),
      'HOOK_CONFIG_UNREADABLE',
      file,
      '(file)',
    )
  })

  it('names the plugin config for inline hooks', () => {
    const at = locations()
    expectHookError(
      () =>
        loadHooks({
          sources: [],
          locations: at,
          inline: { Stop: [{ hooks: [{ type: 'command', command: '' }] }] },
        }),
      'HOOK_CONFIG_INVALID',
      'plugin config',
      'hooks.Stop[0].hooks[0].command',
    )
  })
})

describe('a settings file that is not a regular file (a cloned repository can hold a symbolic link)', () => {
  it('a project .keel/settings.json linked to /dev/zero is HOOK_CONFIG_UNREADABLE naming it, never read', () => {
    const at = locations()
    mkdirSync(join(at.projectDir, '.keel'), { recursive: true })
    const file = join(at.projectDir, '.keel', 'settings.json')
    symlinkSync('/dev/zero', file)
    const error = expectHookError(
      () => loadHooks({ sources: all, locations: at }),
      'HOOK_CONFIG_UNREADABLE',
      file,
      '(file)',
    )
    expect(error.message).toContain('a character device, not a regular file; not read')
  })
})
