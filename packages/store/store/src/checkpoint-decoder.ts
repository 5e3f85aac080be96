import { isAscii } from 'node:buffer'
import { crc32 } from 'node:zlib'
import { errorMessage, type JsonValue } from '@keel/base'
import { SESSION_FORMAT_VERSION } from '@keel/session'
import { CHECKPOINT_FORMAT, CHECKPOINT_FORMAT_VERSION, type CheckpointDocument } from './checkpoint-file.js'

/** Why a stored checkpoint cannot be read, in words for a notice; or the document. */
export type DecodedCheckpoint = { ok: true; doc: CheckpointDocument } | { ok: false; reason: string }

/** A first line longer than this is not a checkpoint's header. */
const MAX_HEAD_BYTES = 4096

/**
 * Reads a stored checkpoint of session `id` as its bytes arrive, in pieces of any size
 * (`push`), so a reader never holds the whole file, nor its whole text, beside the parsed
 * document: each piece is counted, added to the CRC and cut into lines, and each whole line
 * (the document, then one per held event) is parsed as soon as it is complete. Nothing
 * parsed is handed out before `end` has checked the length and the CRC the header names —
 * a damaged or foreign file gives its reason, never its contents.
 */
export class CheckpointDecoder {
  readonly #id: string
  /** Why the file is refused, once known from its header. */
  #refused: string | undefined
  #head: Buffer[] = []
  #headBytes = 0
  #declared: { bytes: number; crc32: unknown } | undefined
  #bodyBytes = 0
  #crc = 0
  /** Bytes of the current line not yet ended by a newline (copies: pieces may be reused). */
  #pending: Buffer[] = []
  #doc: Record<string, unknown> | undefined
  #events: JsonValue[] = []
  #parseError: string | undefined

  constructor(id: string) {
    this.#id = id
  }

  /** The next bytes of the stored file (read now: `bytes` may be reused after). */
  push(bytes: Uint8Array): void {
    if (this.#refused !== undefined) return
    let piece = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    if (!this.#declared) {
      const newline = piece.indexOf(10)
      const headPart = newline === -1 ? piece : piece.subarray(0, newline)
      this.#head.push(Buffer.from(headPart))
      this.#headBytes += headPart.length
      if (newline === -1) {
        if (this.#headBytes > MAX_HEAD_BYTES) this.#refused = FOREIGN
        return
      }
      if (!this.#readHead()) return
      piece = piece.subarray(newline + 1)
    }
    this.#bodyBytes += piece.length
    this.#crc = crc32(piece, this.#crc)
    // past its declared length it is refused at the end; its lines are not worth parsing
    if (this.#parseError === undefined && this.#bodyBytes <= this.#declared!.bytes) this.#lines(piece)
  }

  /**
   * Whether the file is refused whatever comes next (a foreign header, more bytes than its
   * header names): a reader may stop reading and call {@link end} at once.
   */
  get refused(): boolean {
    return (
      this.#refused !== undefined || (this.#declared !== undefined && this.#bodyBytes > this.#declared.bytes)
    )
  }

  /** The document, once every byte was pushed: checked for length, CRC, JSON and owner. */
  end(): DecodedCheckpoint {
    // a header line and no newline after it: the body is empty
    if (!this.#declared && this.#refused === undefined) this.#readHead()
    if (this.#refused !== undefined) return { ok: false, reason: this.#refused }
    const declared = this.#declared!
    if (this.#bodyBytes !== declared.bytes) {
      const found = this.#bodyBytes > declared.bytes ? 'more than that' : `${this.#bodyBytes} bytes`
      return {
        ok: false,
        reason: `it is truncated or padded (its header says ${String(declared.bytes)} bytes; it holds ${found})`,
      }
    }
    if (this.#crc >>> 0 !== declared.crc32) {
      return { ok: false, reason: 'its content does not match its digest (it was damaged or edited)' }
    }
    if (this.#pending.length > 0 && this.#parseError === undefined) {
      this.#line(decode(Buffer.concat(this.#pending)))
      this.#pending = []
    }
    if (this.#parseError !== undefined)
      return { ok: false, reason: `its body is not JSON (${this.#parseError})` }
    return checkDocument(this.#doc, this.#events, this.#id)
  }

  /** Parses the header line gathered so far; false (and refused) when it is not ours. */
  #readHead(): boolean {
    const head = parseHead(Buffer.concat(this.#head).toString('utf8'))
    this.#head = []
    if (!head || head.format !== CHECKPOINT_FORMAT) {
      this.#refused = FOREIGN
      return false
    }
    if (head.version !== CHECKPOINT_FORMAT_VERSION) {
      this.#refused = `it has checkpoint format ${JSON.stringify(head.version)}; this build reads format ${CHECKPOINT_FORMAT_VERSION}`
      return false
    }
    this.#declared = {
      bytes: Number.isSafeInteger(head.bytes) ? (head.bytes as number) : -1,
      crc32: head.crc32,
    }
    return true
  }

  /** Cuts `piece` into lines: the first continues the pending one, the last may go on. */
  #lines(piece: Buffer): void {
    const last = piece.lastIndexOf(10)
    if (last === -1) {
      if (piece.length > 0) this.#pending.push(Buffer.from(piece))
      return
    }
    let start = 0
    if (this.#pending.length > 0) {
      const first = piece.indexOf(10)
      this.#pending.push(piece.subarray(0, first))
      this.#line(decode(Buffer.concat(this.#pending)))
      this.#pending = []
      start = first + 1
    }
    if (start <= last) {
      // the whole lines at once: one decoding, then a slice per line (a newline byte never
      // sits inside a multi-byte character)
      const text = decode(piece.subarray(start, last + 1))
      for (let at = 0; at < text.length && this.#parseError === undefined; ) {
        const newline = text.indexOf('\n', at)
        this.#line(text.slice(at, newline))
        at = newline + 1
      }
    }
    if (last + 1 < piece.length) this.#pending.push(Buffer.from(piece.subarray(last + 1)))
  }

  #line(text: string): void {
    if (this.#parseError !== undefined) return
    try {
      const value = JSON.parse(text) as JsonValue
      if (this.#doc === undefined) {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) {
          this.#parseError = 'its first line is not an object'
        } else this.#doc = value
      } else this.#events.push(value)
    } catch (error) {
      this.#parseError = errorMessage(error)
    }
  }
}

const FOREIGN = 'it is not a Keel checkpoint (foreign format)'

/** ASCII (most checkpoints) decodes as a copy; the rest as UTF-8. */
function decode(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
}

function parseHead(
  line: string,
): { format?: unknown; version?: unknown; bytes?: unknown; crc32?: unknown } | undefined {
  try {
    const head: unknown = JSON.parse(line)
    return head !== null && typeof head === 'object' ? head : undefined
  } catch {
    return undefined // not a checkpoint of ours
  }
}

/** The document of a stored checkpoint whose bytes held, its events put back: or why not. */
function checkDocument(
  parsed: Record<string, unknown> | undefined,
  events: JsonValue[],
  id: string,
): DecodedCheckpoint {
  const doc = parsed as unknown as CheckpointDocument | undefined
  if (doc === undefined || doc.session !== id) {
    return { ok: false, reason: `it belongs to session ${JSON.stringify(doc?.session)}` }
  }
  if (doc.sessionFormat !== SESSION_FORMAT_VERSION) {
    return {
      ok: false,
      reason: `it covers a log of session format ${String(doc.sessionFormat)}; this build writes format ${SESSION_FORMAT_VERSION}`,
    }
  }
  if (!Array.isArray(doc.blobs) || doc.blobs.some((b) => typeof b !== 'string')) {
    return { ok: false, reason: 'its blob index is malformed' }
  }
  if (!Number.isSafeInteger(doc.seq) || doc.mark?.next !== doc.seq) {
    return { ok: false, reason: 'its covered seq and its integrity record disagree' }
  }
  const state = doc.state as unknown as Record<string, unknown> | null
  if (state === null || typeof state !== 'object' || Array.isArray(state) || 'events' in state) {
    return { ok: false, reason: 'its state is malformed (its events are not on lines of their own)' }
  }
  state.events = events
  return { ok: true, doc }
}

/**
 * Reads a stored checkpoint of session `id` (its text, or its bytes as read), checking its
 * format, length, digest and owner: {@link CheckpointDecoder} fed at once.
 */
export function decodeCheckpoint(stored: string | Uint8Array, id: string): DecodedCheckpoint {
  const decoder = new CheckpointDecoder(id)
  decoder.push(typeof stored === 'string' ? Buffer.from(stored) : stored)
  return decoder.end()
}
