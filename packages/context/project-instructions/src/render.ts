import type { SkippedInstruction } from './events.js'
import type { InstructionBundle, LoadedFile } from './load.js'

/** The `source` of the developer messages that carry the instructions. */
export const INSTRUCTIONS_SOURCE = 'project-instructions'

const HEADER =
  'Project instructions: the files below (AGENTS.md and the like) were loaded by Keel from the ' +
  "repository root down to the working directory, then the user's own file, with the files they " +
  'import. Follow them. If this conversation holds several copies of these instructions, the latest ' +
  'one is in force: it replaces the earlier ones.'

const NONE =
  'Project instructions: there are none now. The instruction files given earlier in this ' +
  'conversation were removed or emptied, so those instructions no longer apply.'

const formatBytes = (n: number): string => n.toLocaleString('en-US')

function cutNotice(file: LoadedFile): string {
  const cap = file.cut === 'file-cap' ? 'the per-file cap' : 'the cap on all instruction files together'
  return `[Keel: ${file.path} was cut here: it is ${formatBytes(file.bytes)} bytes and only the first ${formatBytes(file.deliveredBytes)} are shown (${cap}). Read the file for the rest.]`
}

function attribute(value: string): string {
  return value.replace(/[&"<>]/gu, (c) => `&#${c.charCodeAt(0)};`)
}

function block(file: LoadedFile): string {
  const attrs = [`path="${attribute(file.path)}"`]
  if (file.scope === 'user') attrs.push('scope="user"')
  if (file.importedBy !== undefined) attrs.push(`imported-by="${attribute(file.importedBy)}"`)
  const body = file.text.endsWith('\n') ? file.text : `${file.text}\n`
  return `<instructions ${attrs.join(' ')}>\n${body}${file.cut ? `${cutNotice(file)}\n` : ''}</instructions>`
}

/** The skipped files worth telling the model about (the others are noise: a missing `@name`, a duplicate). */
export function notableSkips(skipped: readonly SkippedInstruction[]): SkippedInstruction[] {
  return skipped.filter((s) => s.reason !== 'not-found' && s.reason !== 'duplicate')
}

function skipLine(s: SkippedInstruction): string {
  const from = s.importedBy === undefined ? '' : ` (imported by ${s.importedBy})`
  switch (s.reason) {
    case 'outside-project':
      return `- ${s.path}${from}: outside the project; not loaded until the user approves it`
    case 'depth':
      return `- ${s.path}${from}: too many nested imports; not loaded`
    case 'total-cap':
      return `- ${s.path}${from}: the instruction files together reached their size cap; not loaded`
    case 'not-a-file':
      return `- ${s.path}${from}: not a text file; not loaded`
    default:
      return `- ${s.path}${from}: could not be read`
  }
}

/**
 * The developer message text of a bundle: a fixed header, each file in an `<instructions>`
 * block (a cut says where and why), then what was left out. The text depends only on what
 * was read, so its digest identifies the delivery. With no file at all it says that the
 * earlier instructions no longer apply.
 */
export function renderInstructions(bundle: Pick<InstructionBundle, 'files' | 'skipped'>): string {
  const notable = notableSkips(bundle.skipped)
  if (bundle.files.length === 0 && notable.length === 0) return NONE
  const parts = [HEADER, ...bundle.files.map(block)]
  if (notable.length > 0) parts.push(`Not loaded:\n${notable.map(skipLine).join('\n')}`)
  return parts.join('\n\n')
}

/** One line for the person: what was loaded, what was cut, what waits for approval. */
export function describeDelivery(bundle: Pick<InstructionBundle, 'files' | 'skipped'>): string {
  if (bundle.files.length === 0) return 'no project instruction files now (the earlier ones no longer apply)'
  const files = bundle.files
    .map(
      (f) =>
        `${f.path} (${formatBytes(f.deliveredBytes)} bytes${f.cut ? `, cut from ${formatBytes(f.bytes)}` : ''})`,
    )
    .join(', ')
  const waiting = bundle.skipped.filter((s) => s.reason === 'outside-project')
  const notes = [
    ...(waiting.length > 0
      ? [
          `${waiting.length} import(s) outside the project not loaded (${waiting.map((s) => s.path).join(', ')}): /instructions approve loads them`,
        ]
      : []),
    ...notableSkips(bundle.skipped)
      .filter((s) => s.reason !== 'outside-project')
      .map((s) => skipLine(s).slice(2)),
  ]
  return `loaded ${files}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`
}
