// `@path` mentions, as Claude Code, Gemini CLI and pi take them: Tab completes the path under
// the cursor, and a sent message carries the content of each file it mentions (a directory:
// its listing) after the typed text, so the model reads it without a tool call. The
// attachment is part of the user message, logged like anything typed.
import type { Dirent } from 'node:fs'
import { open, readdir, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { UserMessage } from '@keel/llm'

/** Largest file attached whole (bytes); a bigger one is cut there, and says so. */
export const MAX_ATTACHED_BYTES = 256 * 1024
/** Most entries of a directory listing attached. */
const MAX_LISTED = 200
/** Most completions offered at once. */
export const MAX_COMPLETIONS = 50
/** The first line of every attachment block (how the UI tells an attachment from typed text). */
export const ATTACHMENT_OPEN = '<attached path="'

/** The `@partial` that ends at `cursor`, if the cursor is in one. */
export function mentionAt(text: string, cursor: number): { start: number; partial: string } | undefined {
  const match = /(?:^|\s)@([^\s@]*)$/u.exec(text.slice(0, cursor))
  if (!match) return undefined
  return { start: cursor - match[1]!.length, partial: match[1]! }
}

/** Paths under `cwd` that complete `partial` (directories end with `/`), sorted; at most {@link MAX_COMPLETIONS}. */
export async function completePath(cwd: string, partial: string): Promise<string[]> {
  const slash = partial.lastIndexOf('/')
  const dirPart = slash < 0 ? '' : partial.slice(0, slash + 1)
  const base = slash < 0 ? partial : partial.slice(slash + 1)
  let entries: Dirent[]
  try {
    entries = await readdir(resolve(cwd, dirPart || '.'), { withFileTypes: true })
  } catch {
    return [] // nothing to complete in a directory that cannot be listed
  }
  return entries
    .filter((e) => e.name.startsWith(base) && (base.startsWith('.') || !e.name.startsWith('.')))
    .filter((e) => e.name !== 'node_modules' || base !== '')
    .map((e) => `${dirPart}${e.name}${e.isDirectory() ? '/' : ''}`)
    .sort()
    .slice(0, MAX_COMPLETIONS)
}

/** The longest prefix all `words` share. */
export function commonPrefix(words: readonly string[]): string {
  if (words.length === 0) return ''
  let prefix = words[0]!
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix
}

/** The distinct `@path` tokens of a text, in order (trailing punctuation kept as a candidate). */
export function mentionedPaths(text: string): string[] {
  const found = new Set<string>()
  for (const match of text.matchAll(/(?:^|\s)@(\S+)/gu)) found.add(match[1]!)
  return [...found]
}

async function readHead(
  path: string,
  size: number,
): Promise<{ text: string; cut: boolean; binary: boolean }> {
  const handle = await open(path, 'r')
  try {
    const length = Math.min(size, MAX_ATTACHED_BYTES)
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, 0)
    const bytes = buffer.subarray(0, bytesRead)
    return { text: bytes.toString('utf8'), cut: size > MAX_ATTACHED_BYTES, binary: bytes.includes(0) }
  } finally {
    await handle.close()
  }
}

/** What one mention attaches, or why it attaches nothing. */
async function attachment(
  cwd: string,
  token: string,
): Promise<{ block?: string; note?: string; path?: string }> {
  // `@notes.md,` — the comma is not part of the path when the path without it exists.
  for (const candidate of [token, token.replace(/[),.;:!?]+$/u, '')]) {
    const absolute = isAbsolute(candidate) ? candidate : join(cwd, candidate)
    let info: Awaited<ReturnType<typeof stat>>
    try {
      info = await stat(absolute)
    } catch {
      continue
    }
    const shown = isAbsolute(candidate) ? candidate : relative(cwd, absolute) || '.'
    if (info.isDirectory()) {
      const names = (await readdir(absolute, { withFileTypes: true }))
        .map((e) => `${e.name}${e.isDirectory() ? '/' : ''}`)
        .sort()
      const listed = names.slice(0, MAX_LISTED).join('\n')
      const more = names.length > MAX_LISTED ? `\n… and ${names.length - MAX_LISTED} more` : ''
      return {
        path: shown,
        block: `${ATTACHMENT_OPEN}${shown}" kind="directory">\n${listed}${more}\n</attached>`,
      }
    }
    if (!info.isFile()) return { note: `@${shown} is not a file; not attached` }
    const head = await readHead(absolute, info.size)
    if (head.binary) return { note: `@${shown} looks binary; not attached` }
    const cut = head.cut ? `\n… cut at ${MAX_ATTACHED_BYTES} bytes of ${info.size}` : ''
    return { path: shown, block: `${ATTACHMENT_OPEN}${shown}">\n${head.text}${cut}\n</attached>` }
  }
  return {}
}

/** A message with its mentioned files attached. */
export interface AttachedMessage {
  readonly message: UserMessage
  /** The paths attached, as shown. */
  readonly attached: readonly string[]
  /** Mentions that attach nothing, and why (binary, unreadable). */
  readonly notes: readonly string[]
}

/**
 * The user message for what was typed: the text first, then one block per mentioned file
 * or directory that exists (`<attached path="…">…</attached>`). A mention of nothing that
 * exists stays plain text (an e-mail address, a handle).
 */
export async function attachMentions(text: string, cwd: string): Promise<AttachedMessage> {
  const content: UserMessage['content'] = [{ type: 'text', text }]
  const attached: string[] = []
  const notes: string[] = []
  for (const token of mentionedPaths(text)) {
    let got: Awaited<ReturnType<typeof attachment>>
    try {
      got = await attachment(cwd, token)
    } catch (error) {
      got = {
        note: `@${token} could not be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); not attached`,
      }
    }
    if (got.note) notes.push(got.note)
    if (got.block && got.path && !attached.includes(got.path)) {
      attached.push(got.path)
      content.push({ type: 'text', text: got.block })
    }
  }
  return { message: { role: 'user', content }, attached, notes }
}

/** The typed part of a message (its attachments left out) and the paths it attached. */
export function typedPart(message: UserMessage): { text: string; attached: string[] } {
  const attached: string[] = []
  const typed: string[] = []
  for (const block of message.content) {
    if (block.type !== 'text') typed.push('[image]')
    else if (block.text.startsWith(ATTACHMENT_OPEN))
      attached.push(block.text.slice(ATTACHMENT_OPEN.length).split('"')[0]!)
    else typed.push(block.text)
  }
  return { text: typed.join(''), attached }
}
