import { hash } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { KeelError } from '@keel/base'

/**
 * One integrity record of a stored log, written by this store after a batch that ends a
 * turn (and on close): it covers the stored lines of seqs `[seq, next)` — every line since
 * the previous record — with their CRC-32 and extends a SHA-256 chain over all records
 * from the log's header. Lines a record covers were written by this store under the
 * current format (or validated by it on open) and can be loaded without re-checking their
 * payload once their CRC holds; a checkpoint is tied to the log by the chain value of the
 * record it ends at. Stored beside the log (JSONL: `session.chain`; PostgreSQL: a table).
 */
export interface IntegrityMark {
  /** The first seq covered. */
  readonly seq: number
  /** The seq after the last one covered. */
  readonly next: number
  /** CRC-32 of the stored lines of `[seq, next)`, each as UTF-8 followed by `\n`. */
  readonly crc: number
  /** Hex SHA-256 of the previous record's chain (the root for the first), `seq`, `next` and `crc`. */
  readonly chain: string
}

/** The chain value before the first record: ties the records to one log's header. */
export function chainRoot(headerText: string): string {
  return hash('sha256', `keel-chain-1\n${headerText}`, 'hex')
}

/** The chain value of a record covering `[seq, next)` with `crc`, after `prev`. */
export function nextChain(prev: string, seq: number, next: number, crc: number): string {
  // one-shot: no hash object per record (under load `createHash` cost ten times as much)
  return hash('sha256', `${prev}:${seq}:${next}:${crc}`, 'hex')
}

/** The CRC-32 of `line` and its newline, continuing `crc`. */
export function lineCrc(line: string, crc: number): number {
  return withNewline(crc32(line, crc))
}

/** The CRC-32 (IEEE, as `zlib.crc32`) of each byte value, for the one byte of a newline. */
const CRC_TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/** `crc32('\n', crc)` without a second native call per line: one table step. */
function withNewline(crc: number): number {
  const c = ~crc
  return ~(CRC_TABLE[(c ^ 0x0a) & 0xff]! ^ (c >>> 8)) >>> 0
}

/**
 * How many stored lines before a checkpoint its tie covers with a CRC of its own (line-based
 * backends): checking that a checkpoint still belongs to the log reads only these.
 */
export const TIE_LINES = 64

/** The CRC-32 of stored lines, each followed by `\n`. */
export function linesCrc(lines: Iterable<string>): number {
  let crc = 0
  for (const line of lines) crc = lineCrc(line, crc)
  return crc >>> 0
}

/** Whether `value` is a well-formed record (shape only; the chain is checked by {@link linksTo}). */
export function isMark(value: unknown): value is IntegrityMark {
  const m = value as Partial<IntegrityMark> | null
  return (
    m !== null &&
    typeof m === 'object' &&
    Number.isSafeInteger(m.seq) &&
    Number.isSafeInteger(m.next) &&
    m.seq! >= 0 &&
    m.next! > m.seq! &&
    Number.isInteger(m.crc) &&
    m.crc! >= 0 &&
    m.crc! <= 0xffffffff &&
    typeof m.chain === 'string' &&
    /^[0-9a-f]{64}$/.test(m.chain)
  )
}

/** Whether `mark` follows a record ending at `next` whose chain value is `prev`. */
export function linksTo(mark: IntegrityMark, prev: string, next: number): boolean {
  return mark.seq === next && mark.chain === nextChain(prev, mark.seq, mark.next, mark.crc)
}

/**
 * Where a writer continues the chain: the chain value and next seq of the last record that
 * held, and the CRC of the lines after it (read and validated while loading).
 */
export interface IntegrityStart {
  readonly chain: string
  /** The first seq not covered by a record. */
  readonly from: number
  /** CRC-32 of the lines `[from, end of log)`. */
  readonly crc: number
  /** The last record that held (ending at `from`), if any: a checkpoint at `from` is tied to it. */
  readonly last?: IntegrityMark
}

/** The chain root of a log whose logical header is `header` (its JSON as stored). */
export function headerRoot(header: object): string {
  return chainRoot(JSON.stringify(header))
}

/** A covered range whose lines do not have the CRC its record says: the log changed after it was written. */
export class IntegrityBroken extends KeelError<'INTEGRITY_BROKEN'> {
  constructor(id: string, mark: IntegrityMark, where: string) {
    super(
      'INTEGRITY_BROKEN',
      `session ${id}: events ${mark.seq}..${mark.next - 1} (${where}) do not match their integrity record (CRC-32 differs): the log was changed after it was written`,
      { id, seq: mark.seq, next: mark.next },
    )
  }
}

/**
 * The writer's side: the CRC of lines since the last record and the chain so far. The
 * handle feeds it every line it writes and asks for a record at turn ends.
 */
export class IntegrityTracker {
  #chain: string
  #from: number
  #crc: number
  #next: number
  #last: IntegrityMark | undefined

  constructor(start: IntegrityStart, next: number) {
    this.#chain = start.chain
    this.#from = start.from
    this.#crc = start.crc
    this.#next = next
    this.#last = start.last
  }

  /** The last record stored (ending at the first uncovered seq), if any. */
  get last(): IntegrityMark | undefined {
    return this.#last
  }

  /** The first seq no record covers yet. */
  get from(): number {
    return this.#from
  }

  /** Adds the stored line of seq `next` (lines come in seq order). */
  add(line: string): void {
    this.#crc = lineCrc(line, this.#crc)
    this.#next++
  }

  /** The seq after the last line added. */
  get next(): number {
    return this.#next
  }

  /** A record covering every line added since the last one, or undefined when there is none. */
  mark(): IntegrityMark | undefined {
    if (this.#next === this.#from) return undefined
    const mark: IntegrityMark = {
      seq: this.#from,
      next: this.#next,
      crc: this.#crc >>> 0,
      chain: nextChain(this.#chain, this.#from, this.#next, this.#crc >>> 0),
    }
    return mark
  }

  /** Where the running CRC stands, to go back to with {@link rewind} when a write is retried. */
  position(): { crc: number; next: number } {
    return { crc: this.#crc, next: this.#next }
  }

  /** Forgets the lines added after `position` (their write did not happen and will be tried again). */
  rewind(position: { crc: number; next: number }): void {
    this.#crc = position.crc
    this.#next = position.next
  }

  /** Moves on after `mark` was stored. */
  commit(mark: IntegrityMark): void {
    this.#chain = mark.chain
    this.#from = mark.next
    this.#crc = 0
    this.#last = mark
  }
}

/**
 * The reader's side: given the chain-valid records of the log from `start.from` on, says
 * which seqs are covered (vouched for, optimistically: a record's CRC is checked when its
 * last byte was read) and checks each record as its range ends. When a CRC differs: with
 * `strict` (a load that vouches), throws {@link IntegrityBroken}; otherwise the records
 * stop there and the writer continues after the last one that held. What follows the last
 * record is CRC'd for the writer. Backends feed it lines ({@link LineVerifier}) or bytes.
 */
export class RecordVerifier<M extends IntegrityMark = IntegrityMark> {
  readonly #id: string
  readonly #where: (mark: M) => string
  readonly #marks: readonly M[]
  readonly #strict: boolean
  #index = 0
  /** CRC-32 of what was fed since the end of the last record that held. */
  #crc: number
  #chain: string
  #from: number
  #last: M | undefined
  #coveredTo: number
  #broken: M | undefined

  constructor(
    id: string,
    where: (mark: M) => string,
    start: IntegrityStart,
    marks: readonly M[],
    strict: boolean,
  ) {
    this.#id = id
    this.#where = where
    this.#marks = marks
    this.#strict = strict
    this.#crc = start.crc
    this.#chain = start.chain
    this.#from = start.from
    this.#last = start.last as M | undefined
    this.#coveredTo = marks.length > 0 ? marks[marks.length - 1]!.next : start.from
  }

  /** Whether the stored line of `seq` lies in a record's range. */
  readonly trusted = (seq: number): boolean => seq < this.#coveredTo

  /** The record whose range is being read, if any. */
  protected get current(): M | undefined {
    return this.#broken ? undefined : this.#marks[this.#index]
  }

  /** The first record whose CRC did not hold (without `strict`), if any. */
  get broken(): M | undefined {
    return this.#broken
  }

  /** The error of a record that did not hold. */
  brokenError(mark: M): IntegrityBroken {
    return new IntegrityBroken(this.#id, mark, this.#where(mark))
  }

  /** The last record that held so far. */
  get last(): M | undefined {
    return this.#last
  }

  /** Adds stored bytes (or text, as UTF-8) in log order. */
  protected add(data: string | Uint8Array): void {
    this.#crc = crc32(data, this.#crc)
  }

  /** The current record's range was read to its end: checks its CRC. */
  protected ended(mark: M): void {
    if (this.#crc >>> 0 !== mark.crc) {
      if (this.#strict) throw this.brokenError(mark)
      this.#broken = mark
      this.#coveredTo = 0
      return
    }
    this.#crc = 0
    this.#chain = mark.chain
    this.#from = mark.next
    this.#last = mark
    this.#index++
  }

  /** Where a writer continues once everything was fed; `tail` is text it will add first (a missing newline). */
  start(tail?: string): IntegrityStart {
    const crc = (tail === undefined ? this.#crc : crc32(tail, this.#crc)) >>> 0
    const start = { chain: this.#chain, from: this.#from, crc }
    return this.#last ? { ...start, last: this.#last } : start
  }
}

/** A {@link RecordVerifier} fed one stored line at a time (memory, PostgreSQL). */
export class LineVerifier extends RecordVerifier {
  constructor(
    id: string,
    where: string,
    start: IntegrityStart,
    marks: readonly IntegrityMark[],
    strict: boolean,
  ) {
    super(id, () => where, start, marks, strict)
  }

  /** Feeds the stored line of `seq` (lines come in seq order). */
  line(seq: number, text: string): void {
    this.add(text)
    this.add('\n')
    const mark = this.current
    if (mark && seq + 1 === mark.next) this.ended(mark)
  }

  /**
   * Feeds `count` stored lines from seq `first` on, given joined by `\n` (no newline after
   * the last): one CRC call per record's piece rather than per line.
   */
  lines(first: number, joined: string, count: number): void {
    const end = first + count
    let pos = 0
    for (let seq = first; seq < end; ) {
      const mark = this.current
      const upTo = mark ? Math.min(mark.next, end) : end
      let cut = pos
      for (let i = seq; i < upTo; i++) {
        const newline = joined.indexOf('\n', cut)
        cut = newline === -1 ? joined.length : newline + 1
      }
      if (cut === joined.length && !joined.endsWith('\n')) {
        this.add(joined.slice(pos))
        this.add('\n')
      } else this.add(joined.slice(pos, cut))
      pos = cut
      seq = upTo
      if (mark && seq === mark.next) this.ended(mark)
    }
  }
}

/** The records of `marks` that form a chain from `root` starting at seq `from`, up to the first that does not. */
export function validChain(marks: readonly unknown[], root: string, from: number): IntegrityMark[] {
  const out: IntegrityMark[] = []
  let prev = root
  let next = from
  for (const mark of marks) {
    if (!isMark(mark) || !linksTo(mark, prev, next)) break
    out.push(mark)
    prev = mark.chain
    next = mark.next
  }
  return out
}
