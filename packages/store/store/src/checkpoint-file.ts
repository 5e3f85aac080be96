import { crc32 } from 'node:zlib'
import type { JsonValue } from '@keel/base'
import type { SessionCheckpoint } from '@keel/session'
import { isBlobStub, type PendingBlob, resolveBlobStub, spill } from './blob.js'
import { SessionCorrupt } from './errors.js'
import type { IntegrityMark } from './integrity.js'

/** The `format` of a stored checkpoint's first line. */
export const CHECKPOINT_FORMAT = 'keel-checkpoint'

/** Bumped whenever the stored form of a checkpoint changes; another version is not used. */
export const CHECKPOINT_FORMAT_VERSION = 2

/**
 * A stored checkpoint: the folded state of a session after `seq` events (see
 * `Session.checkpoint`), the integrity record it ends at, and where the backend finds that
 * record and the rest of the log (`locator`: JSONL byte offsets; nothing for a table).
 */
export interface CheckpointDocument {
  readonly session: string
  /** The session format the covered log was written in. */
  readonly sessionFormat: number
  /** The seqs covered: `[0, seq)`. */
  readonly seq: number
  /** The integrity record covering the log up to `seq`: the tie to exactly that prefix. */
  readonly mark: IntegrityMark
  readonly locator: JsonValue
  /**
   * The blob index: the digests of the blobs holding the events of `state.events` that are
   * over the line cap (stored there as their `BlobStub`, as in the log), resolved on read.
   */
  readonly blobs: readonly string[]
  readonly state: SessionCheckpoint
}

/**
 * The stored form: a first line `{"format","version","bytes","crc32"}` naming the length and
 * the CRC-32 of the rest, then the body: the document as JSON without `state.events` on one
 * line, and each of those events on a line of its own after it (so a reader parses the file
 * as it reads it, never holding all of its text; see `CheckpointDecoder`). A truncated,
 * damaged or foreign file is told apart from a valid one by its first line, its length and
 * its CRC. (A CRC, not a cryptographic digest: it detects damage; nothing kept beside a log
 * can detect a deliberate forgery — `verify` can, by replaying the log. The tie to the log
 * is the integrity record's SHA-256 chain value.)
 */
export function encodeCheckpoint(doc: CheckpointDocument): string {
  const { events, ...state } = doc.state
  const lines = [JSON.stringify({ ...doc, state })]
  for (const event of events) lines.push(JSON.stringify(event))
  const body = lines.join('\n')
  const head = {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_FORMAT_VERSION,
    bytes: Buffer.byteLength(body),
    crc32: crc32(body),
  }
  return `${JSON.stringify(head)}\n${body}`
}

/**
 * Keeps the events of a checkpoint's state that are over the line cap as their blob stubs
 * (the blob written beside, as for the log), so a large event on the surface is not copied
 * into every checkpoint. Returns the state to store and the blobs to write first.
 */
export function spillCheckpoint(
  state: SessionCheckpoint,
  maxLineBytes: number,
): { state: SessionCheckpoint; blobs: PendingBlob[] } {
  const blobs: PendingBlob[] = []
  const events = state.events.map((event) => {
    const json = JSON.stringify(event)
    if (json.length * 3 <= maxLineBytes) return event
    const bytes = Buffer.byteLength(json)
    if (bytes <= maxLineBytes) return event
    const spilled = spill(event as never, json, bytes)
    blobs.push(spilled.blob)
    return JSON.parse(spilled.json) as JsonValue
  })
  return blobs.length === 0 ? { state, blobs } : { state: { ...state, events }, blobs }
}

/**
 * Puts the blobs of a checkpoint back in place of its stubs (`contents` by digest), or says
 * why it cannot: a blob is missing or does not match.
 */
export function resolveCheckpointBlobs(
  doc: CheckpointDocument,
  contents: ReadonlyMap<string, Uint8Array | string>,
): { ok: true; doc: CheckpointDocument } | { ok: false; reason: string } {
  if (doc.blobs.length === 0) return { ok: true, doc }
  try {
    const events = doc.state.events.map((event) => {
      if (!isBlobStub(event)) return event
      const content = contents.get(event.blob?.sha256)
      return resolveBlobStub(doc.session, event, content, `blob ${event.blob?.sha256}`, {
        seq: event.seq,
      }) as JsonValue
    })
    return { ok: true, doc: { ...doc, state: { ...doc.state, events } } }
  } catch (error) {
    if (!(error instanceof SessionCorrupt)) throw error
    return { ok: false, reason: `a blob it refers to cannot be used (${error.details.reason})` }
  }
}

/** When a handle writes checkpoints. */
export interface CheckpointPolicy {
  /** At a turn end, once this many events were appended since the last checkpoint. Default 2,000. */
  every?: number
  /** On close, once the log has at least this many events (and any is new since the last). Default 200. */
  minEvents?: number
}

export const DEFAULT_CHECKPOINT_EVERY = 2000
export const DEFAULT_CHECKPOINT_MIN_EVENTS = 200
