import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { definePlugin, type PluginContext, type PluginDefinition } from '@keel/agent'
import { elide, errorMessage } from '@keel/base'
import type {} from '@keel/user-approval'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import type { DeliveryReason } from './events.js'
import { findProjectRoot, isInside } from './files.js'
import { initPrompt, repositoryOverview } from './init.js'
import { type InstructionBundle, loadInstructions, sha256 } from './load.js'
import { describeDelivery, INSTRUCTIONS_SOURCE, notableSkips, renderInstructions } from './render.js'
import { deliveryDecision, instructionsProjection } from './state.js'

/** The project-instructions plugin's config, as a preset holds it. */
export const projectInstructionsConfigSchema = z.strictObject({
  /** Looked for in every directory from the repository root down to the working directory, in this order. */
  fileNames: z.array(z.string().min(1)).min(1).default(['AGENTS.md', 'CLAUDE.md', '.keel/AGENTS.md']),
  /** Read the user's own `$KEEL_HOME/AGENTS.md` after the project's files. */
  userFile: z.boolean().default(true),
  /** Keel's home (default `$KEEL_HOME`, else `~/.keel`). */
  keelHome: z.string().min(1).optional(),
  /** Bytes of one file delivered at most; the rest is cut with a notice. */
  maxFileBytes: z.number().int().min(256).default(32_768),
  /** Bytes of all the files together delivered at most. */
  maxTotalBytes: z.number().int().min(256).default(65_536),
  /** `@path` import hops followed (Claude Code: 5). */
  maxImportDepth: z.number().int().min(0).max(10).default(5),
  /**
   * Directories outside the project whose files may be imported without asking (`~` is the
   * home directory; relative ones resolve against the working directory): a standing approval.
   */
  allowedImportRoots: z.array(z.string().min(1)).default([]),
})

/** The validated config of the project-instructions plugin. */
export type ProjectInstructionsConfig = z.output<typeof projectInstructionsConfigSchema>

/** What only code can give the plugin. */
export interface ProjectInstructionsOptions {
  /** The home directory `~` expands to. Default `os.homedir()`. */
  home?: string
  /** Where `$KEEL_HOME` is read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>
}

const expand = (path: string, cwd: string, home: string): string =>
  path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : resolve(cwd, path)

/**
 * The project-instructions plugin. Before the first step of every turn it reads the
 * instruction files ({@link loadInstructions}) and, when the model does not have exactly
 * them in its history, logs `instructions/loaded` and injects one developer message
 * carrying them (source {@link INSTRUCTIONS_SOURCE}); after a compaction
 * (`sessionStart` with source `compact`) it does the same at once. Imports outside the
 * project load when the person approved them (`/instructions approve`, logged), when they
 * lie under `allowedImportRoots`, or when the approval policy in force reads anything
 * without asking (`danger_full_access`). `/instructions` shows what was delivered;
 * `/init` queues a turn in which the model drafts `AGENTS.md`.
 */
export function projectInstructions(
  options: ProjectInstructionsOptions = {},
): PluginDefinition<ProjectInstructionsConfig> {
  const home = options.home ?? homedir()
  return definePlugin<ProjectInstructionsConfig>({
    name: '@keel/project-instructions',
    config: projectInstructionsConfigSchema,
    events: ownedEventTypes,
    optional: ['approval.policy'],
    setup(ctx) {
      const { session, config, cwd } = ctx
      const env = options.env ?? process.env
      const keelHome = config.keelHome ?? (env.KEEL_HOME || join(home, '.keel'))
      const standing = config.allowedImportRoots.map((p) => expand(p, cwd, home))
      const policy = ctx.useOptional('approval.policy')
      const processStartSeq = session.nextSeq

      const load = (): Promise<InstructionBundle> => {
        const approved = session.project(instructionsProjection).approved
        return loadInstructions({
          cwd,
          home,
          fileNames: config.fileNames,
          ...(config.userFile ? { userFile: join(keelHome, 'AGENTS.md') } : {}),
          maxFileBytes: config.maxFileBytes,
          maxTotalBytes: config.maxTotalBytes,
          maxImportDepth: config.maxImportDepth,
          mayReadOutside: (real) =>
            approved.includes(real) ||
            standing.some((root) => isInside(real, root)) ||
            policy?.current().sandboxMode === 'danger_full_access',
        })
      }

      const deliverNow = async (afterCompaction: boolean): Promise<void> => {
        let bundle: InstructionBundle
        try {
          bundle = await load()
        } catch (error) {
          ctx.display('instructions-error', `could not read the project instructions: ${errorMessage(error)}`)
          return
        }
        const text = renderInstructions(bundle)
        const digest = sha256(text)
        const reason: DeliveryReason | null = deliveryDecision(session.project(instructionsProjection), {
          digest,
          hasContent: bundle.files.length > 0 || notableSkips(bundle.skipped).length > 0,
          isOnSurface: (seq) => session.isOnSurface(seq),
          processStartSeq,
          afterCompaction,
        })
        if (reason === null) return
        const files = bundle.files.map(({ text: _text, realPath: _real, ...file }) => file)
        session.append(
          'instructions/loaded',
          {
            reason,
            files,
            ...(bundle.skipped.length > 0 ? { skipped: bundle.skipped.slice(0, 100) } : {}),
            digest,
          },
          { ignorable: true },
        )
        ctx.inject({ role: 'developer', content: [{ type: 'text', text }] }, { source: INSTRUCTIONS_SOURCE })
        if (reason !== 'compact') ctx.display('instructions', describeDelivery(bundle))
      }

      // One delivery decision at a time (a compaction may report in while a step's check reads files).
      let queue: Promise<void> = Promise.resolve()
      const deliver = (afterCompaction: boolean): Promise<void> => {
        const run = queue.then(() => deliverNow(afterCompaction))
        // The caller gets the failure (the interceptor fails closed); the next decision still runs.
        queue = run.then(
          () => undefined,
          () => undefined,
        )
        return run
      }

      ctx.intercept({
        async beforeStep({ step }) {
          if (step === 1) await deliver(false)
          return { action: 'enter' }
        },
        async sessionStart({ source }) {
          if (source === 'compact') await deliver(true)
          return { action: 'continue' }
        },
      })
      registerInstructionCommands(ctx, load)
    },
  })
}

function registerInstructionCommands(
  ctx: PluginContext<ProjectInstructionsConfig>,
  load: () => Promise<InstructionBundle>,
): void {
  const { session, config } = ctx
  ctx.registerCommand('instructions', {
    description:
      'show the project instructions (AGENTS.md…) the model has; `approve` loads imports from outside the project',
    usage: '[approve]',
    async run(args) {
      const wanted = args.trim()
      if (wanted !== '' && wanted !== 'approve')
        return `unknown argument ${JSON.stringify(elide(wanted))}: use /instructions or /instructions approve`
      const bundle = await load()
      if (wanted === 'approve') {
        const waiting = [
          ...new Set(
            bundle.skipped.flatMap((s) => (s.reason === 'outside-project' && s.realPath ? [s.realPath] : [])),
          ),
        ]
        if (waiting.length === 0) return 'no import outside the project is waiting for approval'
        session.append('instructions/imports-approved', { paths: waiting })
        return `approved for this session: ${waiting.join(', ')}; the model gets them before its next step`
      }
      const last = session.project(instructionsProjection).last
      const sent =
        last === undefined
          ? 'nothing delivered yet'
          : `last delivered (${last.loaded.reason}): ${last.loaded.files.map((f) => `${f.path} sha256:${f.sha256.slice(0, 12)}`).join(', ') || 'no files'}`
      // with no file, the delivery's wording ("the earlier ones no longer apply") fits only a removal
      const now =
        bundle.files.length === 0 && last === undefined
          ? `no project instruction files (${config.fileNames.join(', ')} from the project root down to the working directory)`
          : describeDelivery(bundle)
      return `${now}\n${sent}`
    },
  })
  ctx.registerCommand('init', {
    description: 'have the model draft (or improve) AGENTS.md for this repository',
    usage: '[what to pay attention to]',
    async run(args) {
      const { root } = await findProjectRoot(ctx.cwd)
      const overview = await repositoryOverview(root)
      ctx.enqueue(
        { role: 'user', content: [{ type: 'text', text: initPrompt(root, overview, args.trim()) }] },
        { source: 'project-instructions/init' },
      )
      return `queued: the model drafts ${join(root, 'AGENTS.md')} (its file writes are approved like any other)`
    },
  })
}

/** The plugin with code-level defaults. */
export const projectInstructionsPlugin: PluginDefinition<ProjectInstructionsConfig> = projectInstructions()
