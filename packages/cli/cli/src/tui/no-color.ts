// Interactive `keel` without colour (NO_COLOR): the colour libraries it draws with (Ink's chalk,
// marked-terminal, cli-highlight) know only "every style" or "no style at all", and no style at
// all would hide the input line's cursor (an inverse cell), bold and dim. So they keep styling,
// and everything written to the terminal loses its colour parameters here, on the way out: one
// place, whatever library the escape came from.

/** A CSI sequence: parameters, intermediates, final byte. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
const CSI = /\x1b\[([0-9:;<=>?]*)([ -/]*)([@-~])/gu

/** SGR parameters that set a colour: foreground, background, bright, default; 38/48/58 take arguments. */
function isColor(code: number): boolean {
  return (
    (code >= 30 && code <= 39) ||
    (code >= 40 && code <= 49) ||
    (code >= 90 && code <= 97) ||
    (code >= 100 && code <= 107) ||
    code === 58 ||
    code === 59
  )
}

/** The parameters of one SGR sequence without its colours; undefined when none are left. */
function stripParams(params: string): string | undefined {
  if (params === '') return params // `ESC[m`: a reset
  const parts = params.split(';')
  const kept: string[] = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const code = Number.parseInt(part.split(':')[0] || '0', 10)
    if (!isColor(code)) {
      kept.push(part)
      continue
    }
    // `38;5;n` and `38;2;r;g;b` (the colon forms are one part and go whole)
    if ((code === 38 || code === 48 || code === 58) && !part.includes(':')) {
      const mode = parts[i + 1]
      if (mode === '5') i += 2
      else if (mode === '2') i += 4
    }
  }
  return kept.length === 0 ? undefined : kept.join(';')
}

/** `text` with every colour parameter removed from its SGR sequences; other escapes and text as they were. */
export function withoutColor(text: string): string {
  return text.replace(CSI, (whole, params: string, between: string, final: string) => {
    if (final !== 'm' || between !== '' || /[<=>?]/u.test(params)) return whole
    const kept = stripParams(params)
    return kept === undefined ? '' : `\x1b[${kept}m`
  })
}

/**
 * A view of `stream` whose `write` drops colour (see {@link withoutColor}); everything else
 * (size, `resize` events, `isTTY`) is the stream's own. An escape cut between two writes is
 * held back until the write that finishes it.
 */
export function colorless<S extends NodeJS.WriteStream>(stream: S): S {
  let held = ''
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const text =
      held + (typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'))
    const cut = unfinishedEscape(text)
    held = text.slice(cut)
    return (stream.write as (...args: unknown[]) => boolean)(withoutColor(text.slice(0, cut)), ...rest)
  }
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'write') return write
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Where an escape sequence left unfinished at the end of `text` starts (`text.length` when none is). */
function unfinishedEscape(text: string): number {
  const at = text.lastIndexOf('\x1b')
  if (at < 0) return text.length
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
  return /^\x1b(?:\[[0-9:;<=>?]*[ -/]*)?$/u.test(text.slice(at)) ? at : text.length
}
