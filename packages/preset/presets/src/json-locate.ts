/** A place in a text, 1-based, columns counted in UTF-16 code units. */
export interface TextPosition {
  readonly line: number
  readonly column: number
}

/** What {@link parseLocatedJson} made of a text. */
export type LocatedJson =
  | {
      readonly ok: true
      readonly value: unknown
      /** Where the value at `path` starts, or the nearest enclosing value that exists. */
      at(path: ReadonlyArray<PropertyKey>): TextPosition
      /** Where the key `key` of the object at `path` is written, when it is. */
      keyAt(path: ReadonlyArray<PropertyKey>, key: string): TextPosition | undefined
    }
  | { readonly ok: false; readonly message: string; readonly position: TextPosition }

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message)
  }
}

const MAX_DEPTH = 256

/**
 * Strict JSON (RFC 8259, as `JSON.parse` reads it) that remembers where each value and key
 * starts, so a problem found later (a schema issue at `$.plugins[1].config`) can be shown
 * as `line:column`. A syntax error is reported with its own position. Nesting is bounded.
 */
export function parseLocatedJson(text: string): LocatedJson {
  const values = new Map<string, number>()
  const keys = new Map<string, number>()
  const id = (path: ReadonlyArray<PropertyKey>) => JSON.stringify(path.map(String))
  let i = 0
  const space = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r'))
      i++
  }
  const fail = (message: string, at = i): never => {
    throw new JsonSyntaxError(message, at)
  }
  const describe = () => (i >= text.length ? 'the end of the text' : JSON.stringify(text[i]))
  const string = (): string => {
    const start = i
    i++
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i)
      if (c < 0x20) fail('a control character inside a string must be escaped')
      if (text[i] === '\\') {
        i++
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/u.test(text.slice(i + 1, i + 5))) fail('\\u needs four hex digits')
          i += 4
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail(`unknown escape \\${text[i] ?? ''}`)
      }
      i++
    }
    if (i >= text.length) fail('this string is not closed', start)
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (path: PropertyKey[], depth: number): unknown => {
    space()
    if (depth > MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`)
    values.set(id(path), i)
    const c = text[i]
    if (c === '{') {
      i++
      const out: Record<string, unknown> = {}
      space()
      if (text[i] === '}') {
        i++
        return out
      }
      for (;;) {
        space()
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describe()}`)
        const keyStart = i
        const key = string()
        keys.set(id([...path, key]), keyStart)
        space()
        if (text[i] !== ':') fail(`expected ':' after the property name, found ${describe()}`)
        i++
        Object.defineProperty(out, key, {
          value: value([...path, key], depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        })
        space()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === '}') {
          i++
          return out
        }
        fail(`expected ',' or '}' after a property value, found ${describe()}`)
      }
    }
    if (c === '[') {
      i++
      const out: unknown[] = []
      space()
      if (text[i] === ']') {
        i++
        return out
      }
      for (;;) {
        out.push(value([...path, out.length], depth + 1))
        space()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === ']') {
          i++
          return out
        }
        fail(`expected ',' or ']' after an array element, found ${describe()}`)
      }
    }
    if (c === '"') return string()
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/u.exec(
      text.slice(i, i + 400),
    )
    if (!literal) fail(`expected a value, found ${describe()}`)
    i += literal![0].length
    return JSON.parse(literal![0])
  }
  const position = (offset: number): TextPosition => {
    let line = 1
    let start = 0
    for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
      line++
      start = at + 1
    }
    return { line, column: offset - start + 1 }
  }
  try {
    if (text.charCodeAt(0) === 0xfeff) i = 1
    const parsed = value([], 0)
    space()
    if (i < text.length) fail(`unexpected ${describe()} after the JSON value`)
    return {
      ok: true,
      value: parsed,
      at(path) {
        for (let n = path.length; n >= 0; n--) {
          const offset = values.get(id(path.slice(0, n)))
          if (offset !== undefined) return position(offset)
        }
        return { line: 1, column: 1 }
      },
      keyAt(path, key) {
        const offset = keys.get(id([...path, key]))
        return offset === undefined ? undefined : position(offset)
      },
    }
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error
    return { ok: false, message: error.message, position: position(error.offset) }
  }
}
