// The events @keel/project-instructions owns. Declared once, here: `pnpm gen-persistence-catalog`
// generates their validators into events.generated.ts (registered on import) and the catalog entries.
import './events.generated.js'

/**
 * Where an instruction file was found.
 * - `project`: in the repository (git root down to the working directory), or imported by such a file.
 * - `user`: the user's own `$KEEL_HOME/AGENTS.md`, or imported by it.
 */
export type InstructionScope = 'project' | 'user'

/** One file whose text the developer message carries. */
export interface InstructionFile {
  /**
   * The file as the model was shown it: relative to the project root for a file inside the
   * project, absolute otherwise.
   * @minLength 1
   */
  path: string
  scope: InstructionScope
  /** The `path` of the file whose `@path` import brought this one in; absent for a discovered file. */
  importedBy?: string
  /**
   * SHA-256 (hex) of the text delivered from this file (after any cut).
   * @pattern ^[0-9a-f]{64}$
   */
  sha256: string
  /**
   * The file's size in bytes.
   * @integer
   * @minimum 0
   */
  bytes: number
  /**
   * How many of its bytes were delivered: less than `bytes` when the file was cut.
   * @integer
   * @minimum 0
   */
  deliveredBytes: number
  /**
   * Why the file was cut: `file-cap` (over the per-file cap) or `total-cap` (the
   * instructions as a whole reached their cap); absent when it was delivered whole.
   */
  cut?: 'file-cap' | 'total-cap'
}

/**
 * Why a file was not delivered.
 * - `outside-project`: an import (or a symlinked instruction file) that resolves outside the
 *   project, which the person has not approved.
 * - `depth`: an import past the import depth limit.
 * - `not-found`: an `@path` naming no file.
 * - `not-a-file`: a directory, device, pipe, or a binary file (one holding a NUL byte).
 * - `unreadable`: the file could not be read (permissions, I/O error).
 * - `total-cap`: the instructions had reached their total cap before this file.
 * - `duplicate`: the same file (or the same text) was already delivered.
 */
export type SkipReason =
  | 'outside-project'
  | 'depth'
  | 'not-found'
  | 'not-a-file'
  | 'unreadable'
  | 'total-cap'
  | 'duplicate'

/** A candidate instruction file that was not delivered, and why. */
export interface SkippedInstruction {
  /**
   * As written in the import, or the discovered file as shown.
   * @minLength 1
   */
  path: string
  /** The file whose import named it; absent for a discovered file. */
  importedBy?: string
  /** The absolute real path, when it resolved to one (what `/instructions approve` approves). */
  realPath?: string
  reason: SkipReason
}

/**
 * Why the instructions were delivered this time.
 * - `start`: the first delivery in this session.
 * - `changed`: a file changed, appeared or disappeared since the last delivery.
 * - `compact`: a compaction replaced the history holding the last delivery.
 * - `missing`: the last delivery is not in the model's history any more (a process that
 *   stopped before delivering it, or history replaced without a compaction notice).
 */
export type DeliveryReason = 'start' | 'changed' | 'compact' | 'missing'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The project instructions were read and are being delivered: the next
     * `developer/message` with source `project-instructions` carries exactly them. `files`
     * lists what it carries, in order, with a digest of each; `skipped` what was left out
     * and why; `digest` is the SHA-256 of the message text, so a later delivery with the
     * same digest is the same text. An empty `files` tells the model that earlier
     * instructions no longer apply. Log-only, appended `ignorable` (the message is what the
     * model sees); at most once per change, compaction or loss, never for unchanged files.
     * @example {"reason":"start","files":[{"path":"AGENTS.md","scope":"project","sha256":"9f2b5c0e1d7a4b3c8e6f0a1b2c3d4e5f60718293a4b5c6d7e8f90123456789ab","bytes":812,"deliveredBytes":812}],"digest":"0a1b2c3d4e5f60718293a4b5c6d7e8f9f2b5c0e1d7a4b3c8e6f0a1b2c3d4e5f6"}
     */
    'instructions/loaded': {
      reason: DeliveryReason
      files: InstructionFile[]
      skipped?: SkippedInstruction[]
      /** @pattern ^[0-9a-f]{64}$ */
      digest: string
    }

    /**
     * The person approved `@path` imports that resolve outside the project (`/instructions
     * approve`), by absolute real path. From then on in this session (and in its forks) those
     * files load like project files. Log-only.
     * @example {"paths":["/home/me/shared/style.md"]}
     */
    'instructions/imports-approved': {
      /** @minItems 1 */
      paths: string[]
    }
  }
}
