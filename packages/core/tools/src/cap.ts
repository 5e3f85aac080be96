import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { errorMessage } from '@keel/base'
import type { ImageBlock, TextBlock } from '@keel/llm'
import {
  type AsideConfig,
  DEFAULT_MAX_STORED_BYTES,
  safeFileName,
  utf8Prefix,
  writeAsideBuffer,
} from './aside.js'
import { toModelText, truncateText } from './text.js'
import type { Tool, ToolContext, ToolOutput } from './tool.js'

/** The text size cap used when neither the tool nor the caller sets one. */
export const DEFAULT_MAX_RESULT_CHARS = 30_000

/**
 * The image cap used when the caller sets none: base64 characters of all image blocks of
 * one result together (640 KiB of base64, about 480 KB of image). With the text cap this
 * keeps a `tool/result` under the stores' 1 MiB event limit.
 */
export const DEFAULT_MAX_IMAGE_CHARS = 640 * 1024

/** The caps {@link capOutput} applies. */
export interface OutputCaps {
  maxResultChars: number
  maxImageChars: number
  aside: AsideConfig
}

/** The output the model gets and where the complete output went. */
export interface CappedOutput {
  output: ToolOutput
  storedAside?: { path: string; chars: number }
}

/** The stored-aside directory when the caller names none. */
export function defaultAsideDir(context: Pick<ToolContext, 'session'>): string {
  return join(tmpdir(), 'keel-tool-outputs', safeFileName(context.session.id))
}

/** What {@link capsFor} takes from the caller: the same options as `runToolCall`'s. */
export interface CapOptions {
  maxResultChars?: number
  maxImageChars?: number
  outputDir?: string
  maxStoredBytes?: number
}

/**
 * The caps of one call: the tool's own, else the caller's, else the defaults. `tool` is
 * undefined for a result that names no known tool (`TOOL_NOT_FOUND`): the caller's caps apply.
 */
export function capsFor(
  tool: Tool<unknown> | undefined,
  context: Pick<ToolContext, 'session' | 'aside'>,
  options: CapOptions,
): OutputCaps {
  return {
    maxResultChars: tool?.maxResultChars ?? options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    maxImageChars: options.maxImageChars ?? DEFAULT_MAX_IMAGE_CHARS,
    aside: context.aside ?? {
      // Worked out only when something is written aside (most calls write nothing).
      get dir() {
        return options.outputDir ?? defaultAsideDir(context)
      },
      maxBytes: options.maxStoredBytes ?? DEFAULT_MAX_STORED_BYTES,
    },
  }
}

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
}

/**
 * Caps one tool output before it becomes an event:
 * - every text block is made sane text ({@link toModelText}: lone surrogates → U+FFFD, NUL → `␀`);
 * - image blocks are kept in order while their base64 data fits `maxImageChars` together;
 *   an image past that is written aside as a binary file and replaced by a text line naming it;
 * - when the text is over `maxResultChars` (or an image was moved aside), the complete text
 *   (with those lines) is written to one stored-aside file and the model gets head + notice
 *   + tail naming it. A tool that already stored its complete output (`output.storedAside`,
 *   e.g. `bash` streaming past its memory window) is not written again: its file is named.
 * Everything stored counts against `aside.maxBytes` (the per-call disk cap); what does not
 * fit is cut with a note. Never throws: a failing disk is reported in the notice.
 */
export async function capOutput(output: ToolOutput, callId: string, caps: OutputCaps): Promise<CappedOutput> {
  let budget = caps.aside.maxBytes
  const notes: string[] = []
  const blocks: Array<TextBlock | ImageBlock> = []
  let imageChars = 0
  let imageIndex = 0
  let movedImages = false
  for (const block of output.content) {
    if (block.type === 'text') {
      blocks.push({ type: 'text', text: toModelText(block.text) })
      continue
    }
    imageIndex++
    if (imageChars + block.data.length <= caps.maxImageChars) {
      imageChars += block.data.length
      blocks.push(block)
      continue
    }
    movedImages = true
    const data = Buffer.from(block.data, 'base64')
    const what = `image ${imageIndex} (${block.mediaType}, ${data.length.toLocaleString('en-US')} bytes)`
    let line: string
    if (data.length > budget) {
      line = `[${what} was too large for the log and over the ${caps.aside.maxBytes.toLocaleString('en-US')}-byte disk cap of this call; it was discarded]`
    } else {
      try {
        const { path } = await writeAsideBuffer(
          caps.aside,
          `${callId}-image-${imageIndex}`,
          EXTENSIONS[block.mediaType] ?? '.bin',
          data,
          budget,
        )
        budget -= data.length
        line = `[${what} was too large for the log; it is saved in ${path}]`
      } catch (error) {
        line = `[${what} was too large for the log and could not be saved (${errorMessage(error)})]`
      }
    }
    blocks.push({ type: 'text', text: line })
    notes.push(line)
  }
  const texts = blocks.filter((b): b is TextBlock => b.type === 'text')
  const images = blocks.filter((b): b is ImageBlock => b.type === 'image')
  const total = texts.reduce((n, b) => n + b.text.length, 0) + Math.max(0, texts.length - 1)
  const capped = (content: Array<TextBlock | ImageBlock>): ToolOutput => {
    const { storedAside: _own, ...rest } = output
    return { ...rest, content }
  }
  const own = output.storedAside
  if (own === undefined && total <= caps.maxResultChars && !movedImages) {
    return { output: capped(blocks) }
  }
  const full = texts.map((b) => b.text).join('\n')
  if (own !== undefined) {
    const location = `The full output (${own.chars.toLocaleString('en-US')} characters) is saved in ${own.path}; read it with read_file (offset/limit) or search it with grep`
    if (full.length <= caps.maxResultChars) return { output: capped(blocks), storedAside: own }
    const { view } = truncateText(full, caps.maxResultChars, location, Math.max(own.chars, full.length))
    return { output: capped([{ type: 'text', text: view }, ...images]), storedAside: own }
  }
  if (total <= caps.maxResultChars) {
    // only images were moved: the text lines name them; nothing else to store
    return { output: capped(blocks) }
  }
  let bytes: Buffer = Buffer.from(full, 'utf8')
  let cut = ''
  if (bytes.length > budget) {
    bytes = utf8Prefix(bytes, budget)
    cut = ` (only its first ${bytes.length.toLocaleString('en-US')} bytes: the disk cap of one call is ${caps.aside.maxBytes.toLocaleString('en-US')} bytes)`
  }
  let location: string
  let storedAside: CappedOutput['storedAside']
  try {
    const { path } = await writeAsideBuffer(caps.aside, callId, '.txt', bytes, budget)
    storedAside = { path, chars: cut === '' ? full.length : bytes.toString('utf8').length }
    location = `The full output is saved in ${path}${cut}; read it with read_file (offset/limit) or search it with grep`
  } catch (error) {
    location = `The full output could not be saved (${errorMessage(error)}); rerun with a narrower request`
  }
  const { view } = truncateText(full, caps.maxResultChars, location)
  const out = capped([{ type: 'text', text: view }, ...images])
  return storedAside === undefined ? { output: out } : { output: out, storedAside }
}
