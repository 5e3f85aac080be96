import { FsToolError } from './common.js'

/**
 * How the fs tools read and write a text file's bytes:
 * - `utf-8` — valid UTF-8 (a byte-order mark is kept as U+FEFF and written back);
 * - `latin-1` — anything else without NUL bytes: each byte is one character U+0000–U+00FF
 *   (ISO-8859-1; the Windows-1252 letters at 0x80–0x9F appear as C1 controls). This mapping
 *   is a bijection, so an edit keeps every byte outside the edited range exactly.
 */
export type TextEncoding = 'utf-8' | 'latin-1'

/** A file's text and the encoding it came from. */
export interface DecodedText {
  text: string
  encoding: TextEncoding
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Decodes a file's bytes. Throws `FILE_ENCODING_UNSUPPORTED` for UTF-16/UTF-32 (byte-order
 * mark) and `FILE_BINARY` for other bytes holding NUL; `path` names the file in the message.
 */
export function decodeText(bytes: Uint8Array, path: string): DecodedText {
  const b0 = bytes[0]
  const b1 = bytes[1]
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    throw new FsToolError(
      'FILE_ENCODING_UNSUPPORTED',
      `${path} is UTF-16/UTF-32 text (it starts with a byte-order mark); the fs tools read and edit UTF-8 and Latin-1 only. Convert it with bash (iconv) if you must change it.`,
      { path },
    )
  }
  if (bytes.includes(0)) {
    throw new FsToolError(
      'FILE_BINARY',
      `${path} is a binary file (${bytes.length.toLocaleString('en-US')} bytes, contains NUL bytes); text tools cannot read or edit it. Inspect it with bash (e.g. \`file\`, \`xxd | head\`) if you need to.`,
      { path, size: bytes.length },
    )
  }
  try {
    return { text: strictUtf8.decode(bytes), encoding: 'utf-8' }
  } catch {
    return { text: Buffer.from(bytes).toString('latin1'), encoding: 'latin-1' }
  }
}

/** Decodes one line (or any fragment) for display: UTF-8 when valid, else Latin-1. */
export function decodeForDisplay(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes)
  } catch {
    return Buffer.from(bytes).toString('latin1')
  }
}

/**
 * Encodes text back into a file's encoding. Throws `FILE_ENCODING_MISMATCH` naming the first
 * character a Latin-1 file cannot hold (the model must choose another spelling or convert
 * the file).
 */
export function encodeText(text: string, encoding: TextEncoding, path: string): Buffer {
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is the point
  const bad = /[^\u0000-\u00ff]/u.exec(text)
  if (bad) {
    const ch = bad[0]
    const cp = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
    throw new FsToolError(
      'FILE_ENCODING_MISMATCH',
      `${path} is a Latin-1 (ISO-8859-1) file and cannot hold ${JSON.stringify(ch)} (U+${cp}); use characters from U+0000–U+00FF (or an ASCII spelling), or convert the file to UTF-8 with bash (iconv) first`,
      { path, character: ch, codePoint: `U+${cp}` },
    )
  }
  return Buffer.from(text, 'latin1')
}
