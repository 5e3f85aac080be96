import { homedir } from 'node:os'
import { join } from 'node:path'
import { type BeforeToolDecision, definePlugin, type Interceptors, type ToolCallInfo } from '@keel/agent'
import { boundIssues, canonicalJson } from '@keel/base'
import { messageText } from '@keel/llm'
import type { Session } from '@keel/session'
import type { Tool } from '@keel/tools'
import { z } from 'zod'
import { hooksCommand } from './command.js'
import { DEFAULT_HOOK_SOURCES, HOOK_SOURCES, type HookSourceId, loadHooks } from './config.js'
import { HookEngine } from './engine.js'
import { ownedEventTypes } from './events.generated.js'
import { hookLifecycleInterceptors } from './lifecycle.js'
import { toHookInput } from './mapping.js'
import { hookApprovalAnswerer } from './permission.js'
import { type PreToolUseResult, postToolUse, stop } from './points.js'
import {
  delegatorAnswer,
  isProjectHandler,
  projectHooksDigest,
  projectHooksGate,
  projectHooksNotice,
  projectHooksProjection,
  projectHooksRun,
} from './project-trust.js'
import { HookSession } from './state.js'

const sourceIds = HOOK_SOURCES.map((s) => s.id) as [HookSourceId, ...HookSourceId[]]

/** The hooks plugin's config, as a preset holds it. */
export const hooksConfigSchema = z.strictObject({
  /** Which settings files are read, from Keel, Claude Code and Codex. Default: Keel's and Claude Code's. */
  sources: z.array(z.enum(sourceIds)).default([...DEFAULT_HOOK_SOURCES]),
  /** Hooks given inline, in the settings `hooks` layout (event → matcher groups → handlers); listed last. */
  hooks: z.unknown().optional(),
  /** The home directory for `~/.claude` (default: the user's). */
  home: z.string().min(1).optional(),
  /** Keel's home (default `$KEEL_HOME`, else `~/.keel`). */
  keelHome: z.string().min(1).optional(),
  /** Codex's home (default `$CODEX_HOME`, else `~/.codex`). */
  codexHome: z.string().min(1).optional(),
  /** `transcript_path` on stdin. Default: where the JSONL store keeps the log, `<keelHome>/sessions/<id>/session.jsonl`. */
  transcriptPath: z.string().min(1).optional(),
  /** `permission_mode` on stdin. */
  permissionMode: z.string().min(1).default('default'),
  /** Overrides Claude Code's default timeouts (600 s; UserPromptSubmit 30 s; SessionEnd 1.5 s). */
  defaultTimeoutSeconds: z.number().positive().max(86_400).optional(),
  /** Bytes of stdout and of stderr kept per handler run; the rest is drained and dropped. */
  maxOutputBytes: z
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Consecutive Stop-hook continuations without tool use before the turn is ended anyway (Claude Code: 8). */
  stopHookCap: z.number().int().min(1).default(8),
  /** Extra Keel tool → hook `tool_name` mappings, beside the built-in table. */
  toolNames: z.record(z.string(), z.string().min(1)).default({}),
  /**
   * Run the hooks of the project's settings files without asking (a preset for a repository
   * you trust, such as your own CI). Default: they wait until a person approves them for
   * the session (`/hooks approve`), and do not run in a headless session.
   */
  trustProject: z.boolean().default(false),
})

/** The validated config of {@link hooksPlugin}. */
export type HooksConfig = z.output<typeof hooksConfigSchema>

function lastAssistantText(session: Session): string | undefined {
  for (let i = session.events.length - 1; i >= 0; i--) {
    const event = session.events[i]!
    if (event.type === 'assistant/message') return messageText(event.data.message)
  }
  return undefined
}

/**
 * What to do with a hook's `updatedInput` (in Keel's field names): `{ input }`, the
 * rewrite validated by the tool's schema, for the `beforeTool` decision to carry (the agent
 * validates it again, recomputes the call's facts and runs every plugin's `beforeTool` on
 * it, so the approval plugin judges the rewritten paths); a deny (`HOOK_INPUT_INVALID`)
 * when the tool does not accept it; `undefined` when it is the call's own input as hooks
 * see it (no rewrite — also how the restarted chain finds the rewrite already applied).
 */
export function updatedInputDecision(
  tool: Tool<unknown>,
  current: unknown,
  updated: unknown,
  projectDir: string,
): { readonly input: unknown } | (BeforeToolDecision & { action: 'deny' }) | undefined {
  const parsed = tool.inputSchema.safeParse(updated)
  if (!parsed.success) {
    return {
      action: 'deny',
      errorCode: 'HOOK_INPUT_INVALID',
      reason: `a PreToolUse hook rewrote the input of ${tool.name} into one it does not accept: ${boundIssues(parsed.error.issues).issues[0]!.message}`,
    }
  }
  const same =
    canonicalJson(toHookInput(tool.name, parsed.data, projectDir)) ===
    canonicalJson(toHookInput(tool.name, current, projectDir))
  return same ? undefined : { input: parsed.data }
}

/**
 * The hooks plugin: loads the hook set (all-or-nothing; a bad file stops the agent from
 * starting) and connects it to the agent's interception points:
 * - `sessionStart` ← SessionStart (`startup`, `resume`; `compact` when a compaction plugin
 *   calls `host.sessionStart`): context becomes a developer message.
 * - `promptSubmit` ← UserPromptSubmit: a block refuses the prompt (not logged, not sent);
 *   context and plain stdout become a developer message after it.
 * - `beforeCompaction` ← PreCompact: a block cancels the compaction.
 * - `sessionEnd` ← SessionEnd, on `agent.close()` (the session still takes `hook/*` events).
 * - `beforeTool` ← PreToolUse: deny (`HOOK_DENIED`), ask, allow; `updatedInput` is returned
 *   as the decision's replacement `input` (every plugin then judges the rewrite);
 *   `continue: false` denies (`HOOK_HALTED`) and ends the turn at the next step.
 * - `afterTool` ← PostToolUse / PostToolUseFailure: feedback and context go to the model as a
 *   developer message beside the result; a Codex `decision: "block"` replaces the result.
 * - `turnStopping` ← Stop (killed on abort): a block keeps the turn going with the reason as the next user
 *   message; `stop_hook_active` is true on every later stop of that turn; after
 *   `stopHookCap` continuations in a row without tool use, the turn stops anyway.
 * - `beforeStep` ends the turn after a `continue: false`.
 * Notices (system messages, hook errors) are shown with `display('hook-notice', …)`.
 * The hooks of the project's settings files (code from the repository) run only once a
 * person approved them for the session (`/hooks approve`, logged as `hook/project-approval`
 * for their exact definitions), or when the config sets `trustProject`; at the start a
 * notice says they wait (or, headless, that nobody can approve them). `/hooks` lists them.
 */
export const hooksPlugin = definePlugin<HooksConfig>({
  name: '@keel/hooks',
  config: hooksConfigSchema,
  events: ownedEventTypes,
  async setup(ctx) {
    const { config, session } = ctx
    const home = config.home ?? homedir()
    const keelHome = config.keelHome ?? (process.env.KEEL_HOME || join(home, '.keel'))
    const codexHome = config.codexHome ?? (process.env.CODEX_HOME || join(home, '.codex'))
    const locations = { projectDir: ctx.cwd, home, keelHome, codexHome }
    const loaded = loadHooks({ sources: config.sources, locations, inline: config.hooks })
    for (const warning of loaded.warnings) ctx.display('hook-warning', warning)
    const digest = projectHooksDigest(loaded)
    // a subagent's session follows the answer of the session that delegated to it (the
    // person answered there); its own log's answer, if it has one, wins
    const inherited = await delegatorAnswer(session, ctx.sessions, loaded, config.trustProject)
    const gate = () =>
      projectHooksGate(config.trustProject, digest, session.project(projectHooksProjection) ?? inherited)
    const projectRuns = () => projectHooksRun(gate())
    ctx.registerCommand('hooks', hooksCommand({ session, loaded, locations, gate }))
    const engine = new HookEngine(loaded, {
      // the project's settings in force: its handlers run, and its disableAllHooks applies;
      // held: only the user's own handlers run
      admits: (handler) => (projectRuns() ? !loaded.projectDisabled : !isProjectHandler(handler)),
      projectDir: ctx.cwd,
      session,
      transcriptPath: config.transcriptPath ?? join(keelHome, 'sessions', session.id, 'session.jsonl'),
      permissionMode: config.permissionMode,
      maxOutputBytes: config.maxOutputBytes,
      ...(config.defaultTimeoutSeconds === undefined
        ? {}
        : { defaultTimeoutSeconds: config.defaultTimeoutSeconds }),
    })
    const show = (notices: readonly string[]): void => {
      for (const notice of notices) ctx.display('hook-notice', notice)
    }
    const tell = (point: string, parts: readonly string[]): void => {
      if (parts.length === 0) return
      ctx.inject(
        { role: 'developer', content: [{ type: 'text', text: `${point} hook:\n${parts.join('\n\n')}` }] },
        { source: `hook/${point}` },
      )
    }
    const halt = (reason: string): void => {
      hooks.halt = reason
      ctx.display('hook-notice', `a hook stopped the agent: ${reason}`)
    }
    // Applied once per PreToolUse run, whoever ran it (this plugin's beforeTool or the
    // approval chain's hook answerer).
    const applyPreToolUse = (result: PreToolUseResult): void => {
      show(result.notices)
      tell('PreToolUse', result.context)
      if (result.halt !== undefined) halt(result.halt)
    }
    const hooks = new HookSession(engine, config.toolNames, applyPreToolUse)

    const interceptors: Interceptors = {
      beforeStep(info) {
        hooks.enterTurn(info.turn)
        if (hooks.halt === undefined) return { action: 'enter' }
        const reason = hooks.halt
        hooks.halt = undefined
        return { action: 'reject', reason: `a hook stopped the agent: ${reason}` }
      },
      async beforeTool(info: ToolCallInfo) {
        const result = await hooks.preToolUse({
          turn: info.turn,
          callId: info.call.id,
          toolName: info.call.name,
          input: info.input,
          ...(info.signal === undefined ? {} : { signal: info.signal }),
        })
        if (result.halt !== undefined) {
          return {
            action: 'deny',
            errorCode: 'HOOK_HALTED',
            reason: `a hook stopped the agent: ${result.halt}`,
          }
        }
        // A vote like every plugin's: a deny refuses the call, an ask opens a question in
        // the agent's answerer chain (where these same results answer as a hook answerer),
        // and an allow never lifts another plugin's deny.
        if (result.decision === 'deny') {
          return {
            action: 'deny',
            errorCode: 'HOOK_DENIED',
            reason: result.reason ?? 'a PreToolUse hook denied it',
          }
        }
        const rewrite =
          result.updatedInput === undefined
            ? undefined
            : updatedInputDecision(info.tool, info.input, result.updatedInput, engine.projectDir)
        if (rewrite && 'action' in rewrite) return rewrite
        if (rewrite) hooks.adopt(info.turn, info.call.id, rewrite.input, result)
        const input = rewrite ? { input: rewrite.input } : {}
        if (result.decision === 'ask') {
          return { action: 'ask', reason: result.reason ?? 'a PreToolUse hook asks for approval', ...input }
        }
        return { action: 'allow', ...input }
      },
      async afterTool(info) {
        const text = info.output.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
        const result = await postToolUse(
          engine,
          {
            turn: info.turn,
            callId: info.call.id,
            toolName: info.call.name,
            input: info.input,
            toolNames: config.toolNames,
            ...(info.signal === undefined ? {} : { signal: info.signal }),
          },
          { text, isError: info.output.isError === true },
        )
        show(result.notices)
        tell(info.output.isError ? 'PostToolUseFailure' : 'PostToolUse', [
          ...result.feedback,
          ...result.context,
        ])
        if (result.halt !== undefined) halt(result.halt)
        if (result.replaceResult !== undefined) return { action: 'block', reason: result.replaceResult }
        return { action: 'accept' }
      },
      async turnStopping(info) {
        hooks.enterTurn(info.turn)
        if (hooks.halt !== undefined) {
          hooks.halt = undefined
          return { action: 'stop' }
        }
        if (info.step > hooks.lastStopStep + 1) hooks.stopBlocks = 0
        const result = await stop(engine, {
          turn: info.turn,
          stopHookActive: hooks.stopContinued,
          ...(info.signal === undefined ? {} : { signal: info.signal }),
          ...((text) => (text === undefined ? {} : { lastAssistantMessage: text }))(
            lastAssistantText(session),
          ),
        })
        show(result.notices)
        if (result.continueWith === undefined) return { action: 'stop' }
        if (hooks.stopBlocks >= config.stopHookCap) {
          ctx.display(
            'hook-notice',
            `Stop hooks kept the turn going ${hooks.stopBlocks} times in a row without progress; stopping anyway`,
          )
          return { action: 'stop' }
        }
        hooks.stopBlocks++
        hooks.stopContinued = true
        hooks.lastStopStep = info.step
        return { action: 'continue', message: result.continueWith }
      },
    }

    const lifecycle = hookLifecycleInterceptors(hooks, (text) => ctx.display('hook-notice', text))
    let told = false
    ctx.intercept({
      ...interceptors,
      ...lifecycle,
      // at the agent's start (its answerers are known only once every plugin is set up):
      // say whether the project's hooks wait, and how to let them run
      sessionStart(info) {
        // (a subagent says nothing: its parent session told the person, and answers for it)
        if (!told && info.source !== 'compact' && session.header.delegatedBy === undefined) {
          told = true
          const headless =
            session.header.agentComposition?.interactive === false ||
            !ctx.answerers().some((a) => a.kind === 'interactive')
          const notice = projectHooksNotice(loaded, gate(), headless)
          if (notice !== undefined) ctx.display('hook-notice', notice)
        }
        return lifecycle.sessionStart(info)
      },
    })

    ctx.registerAnswerer(hookApprovalAnswerer(hooks))
  },
})
