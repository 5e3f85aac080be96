import { createHash } from 'node:crypto'
import { errorMessage } from '@keel/base'
import type { SessionEvent } from '@keel/session'
import { SessionCorrupt, type StoreLocation } from './errors.js'

/**
 * The largest stored line of one event, in UTF-8 bytes (default 1 MiB). An event whose JSON
 * is longer is stored whole in a blob, and its line becomes a {@link BlobStub}.
 */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024

/** The largest event at all, in UTF-8 bytes of its JSON (default 64 MiB); beyond it `EVENT_TOO_LARGE`. */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024

/**
 * The stored line of an event spilled to a blob: the envelope's `type`, `seq` and `time`
 * and the blob's content address. The blob holds the complete event JSON (the exact
 * `JSON.stringify` of the event, UTF-8); readers put it back in place of the stub, so
 * logical events are unchanged. Physical only: no `Session` ever sees a stub.
 */
export interface BlobStub {
  type: string
  seq: number
  time: number
  blob: {
    /** Lowercase hex SHA-256 of the blob's UTF-8 bytes. */
    sha256: string
    /** Its length in bytes. */
    bytes: number
  }
}

/** The blob of a spilled event: its digest and the complete event JSON. */
export interface PendingBlob {
  readonly sha256: string
  readonly json: string
}

/** Lowercase hex SHA-256 of a string's UTF-8 bytes (or of raw bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** Whether a stored, parsed line is a blob stub (an envelope with `blob` and no `data`). */
export function isBlobStub(raw: unknown): raw is BlobStub {
  return (
    raw !== null &&
    typeof raw === 'object' &&
    'blob' in raw &&
    !('data' in raw) &&
    !Array.isArray(raw) &&
    typeof (raw as { blob: unknown }).blob === 'object'
  )
}

/** The stub line and the blob of an event whose JSON (`bytes` long) is over the line cap. */
export function spill(event: SessionEvent, json: string, bytes: number): { json: string; blob: PendingBlob } {
  const sha256 = sha256Hex(json)
  const stub: BlobStub = { type: event.type, seq: event.seq, time: event.time, blob: { sha256, bytes } }
  return { json: JSON.stringify(stub), blob: { sha256, json } }
}

const SHA256 = /^[0-9a-f]{64}$/

/** The digest of a stub, checked to be a well-formed address (so it is safe in a file name). */
export function stubDigest(id: string, stub: BlobStub, where: StoreLocation): string {
  const { sha256, bytes } = stub.blob ?? {}
  if (typeof sha256 !== 'string' || !SHA256.test(sha256) || !Number.isSafeInteger(bytes)) {
    throw new SessionCorrupt(
      id,
      where,
      `the blob stub of event seq ${String(stub.seq)} has no valid { sha256, bytes } address`,
    )
  }
  return sha256
}

/**
 * Turns a stub back into the stored event: checks the blob exists, its digest and length
 * match the stub, it parses, and it is the event the stub names (type, seq, time).
 * `content` is the blob's bytes (undefined when missing); `blobWhere` names it in messages.
 */
export function resolveBlobStub(
  id: string,
  stub: BlobStub,
  content: Uint8Array | string | undefined,
  blobWhere: string,
  where: StoreLocation,
): unknown {
  const sha256 = stubDigest(id, stub, where)
  const name = `event seq ${String(stub.seq)} ('${String(stub.type)}') is stored in blob ${sha256}`
  if (content === undefined) {
    throw new SessionCorrupt(id, where, `${name}, which is missing (${blobWhere})`)
  }
  const bytes = typeof content === 'string' ? Buffer.from(content) : content
  if (bytes.length !== stub.blob.bytes || sha256Hex(bytes) !== sha256) {
    throw new SessionCorrupt(
      id,
      where,
      `${name}, whose content does not match its digest (${blobWhere}: ${bytes.length} bytes, expected ${stub.blob.bytes})`,
    )
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(typeof content === 'string' ? content : Buffer.from(content).toString('utf8'))
  } catch (error) {
    throw new SessionCorrupt(id, where, `${name}, which is not valid JSON (${errorMessage(error)})`)
  }
  const event = parsed as Partial<BlobStub> | null
  if (
    event === null ||
    typeof event !== 'object' ||
    event.type !== stub.type ||
    event.seq !== stub.seq ||
    event.time !== stub.time
  ) {
    throw new SessionCorrupt(id, where, `${name}, which holds a different event than its stub names`)
  }
  return parsed
}
