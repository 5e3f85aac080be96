// Questions about checker types that the graph builder asks: a type's display name and its
// declarations, built-in library types, brand markers, boolean literals, and the pattern a
// template literal type's strings match.
import { ts } from 'ts-morph'

/** The name a type is shown under (alias with its arguments, or interface/class) and its declarations. */
export function typeName(checker: ts.TypeChecker, type: ts.Type): { name?: string; decls: ts.Declaration[] } {
  const alias = type.aliasSymbol
  if (alias) {
    const args = type.aliasTypeArguments
    const name =
      args && args.length > 0
        ? `${alias.name}<${args.map((a) => checker.typeToString(a)).join(', ')}>`
        : alias.name
    return { name, decls: alias.declarations ?? [] }
  }
  const sym = type.getSymbol()
  if (sym && sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) {
    return { name: checker.typeToString(type), decls: sym.declarations ?? [] }
  }
  return { decls: [] }
}

/** A named built-in object type (Date, Map, Set, Promise, …); lib mapped types (Pick, Omit, Record) are fine. */
export function isLibType(program: ts.Program, type: ts.Type): boolean {
  const sym = type.getSymbol()
  if (!sym || !(sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class))) return false
  const decls = sym.declarations ?? []
  return decls.length > 0 && decls.every((d) => program.isSourceFileDefaultLibrary(d.getSourceFile()))
}

/** An object type whose every member is symbol-keyed: the marker of a brand (`Brand<T, 'X'>`). */
export function isBrandMarker(checker: ts.TypeChecker, type: ts.Type): boolean {
  if (!(type.flags & ts.TypeFlags.Object)) return false
  const props = checker.getPropertiesOfType(type)
  if (checker.getSignaturesOfType(type, ts.SignatureKind.Call).length > 0) return false
  if (checker.getIndexInfosOfType(type).length > 0) return false
  return props.every(isSymbolKeyed)
}

/**
 * A property keyed by a symbol (`[brandKey]`). The checker names those `__@name@id`; a string
 * key that starts with `__` is escaped with one more `_` (`'__@x'` → `___@x`), so only the
 * escaped name tells them apart.
 */
export function isSymbolKeyed(prop: ts.Symbol): boolean {
  return (prop.escapedName as string).startsWith('__@')
}

/** The value of a boolean literal type. */
export function boolValue(type: ts.Type): boolean {
  return (type as { intrinsicName?: string }).intrinsicName === 'true'
}

/**
 * A template literal type (or a string mapping such as `Uppercase<string>`) by its structure:
 * its text with every placeholder written as the persisted primitive (brands erased, aliases
 * expanded: `id-${NoteId}` with `NoteId = Brand<number, 'NoteId'>` is `id-${number}`), and the
 * anchored regular expression its strings match. `error` says why a placeholder has no
 * persisted shape; `aliases` are the aliases met in placeholders (their refinement tags cannot
 * hold inside a template).
 */
export function templateOf(
  checker: ts.TypeChecker,
  type: ts.Type,
): { text: string; pattern: string; error?: string; aliases: ts.Symbol[] } {
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const raw = (t: string) => t.replace(/[`\\]|\$\{/g, (m) => `\\${m}`)
  const aliases: ts.Symbol[] = []
  let error: string | undefined
  const F = ts.TypeFlags
  // One placeholder: [its text inside `${…}`, its pattern].
  const part = (t: ts.Type): [string, string] => {
    if (t.aliasSymbol) aliases.push(t.aliasSymbol)
    if (t.flags & F.String) return ['string', '[\\s\\S]*']
    if (t.flags & F.Number) return ['number', '-?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?']
    if (t.flags & F.BigInt) return ['bigint', '-?\\d+']
    if (t.flags & F.StringLiteral)
      return [`"${(t as ts.StringLiteralType).value}"`, esc((t as ts.StringLiteralType).value)]
    if (t.flags & F.NumberLiteral) {
      const v = String((t as ts.NumberLiteralType).value)
      return [v, esc(v)]
    }
    if (t.flags & F.BooleanLiteral) return boolValue(t) ? ['true', 'true'] : ['false', 'false']
    if (t.flags & F.Boolean) return ['boolean', '(?:true|false)']
    if (t.flags & F.Union) {
      const parts = (t as ts.UnionType).types.map(part)
      return [
        parts
          .map((p) => p[0])
          .sort()
          .join(' | '),
        `(?:${parts.map((p) => p[1]).join('|')})`,
      ]
    }
    if (t.flags & F.TemplateLiteral) {
      const inner = whole(t as ts.TemplateLiteralType)
      return [`\`${inner[0]}\``, inner[1]]
    }
    if (t.flags & F.StringMapping) {
      const m = t as ts.StringMappingType
      return [`${m.symbol.name}<${part(m.type)[0]}>`, '[\\s\\S]*']
    }
    if (t.flags & F.Intersection) {
      const kept = (t as ts.IntersectionType).types.filter((m) => !isBrandMarker(checker, m))
      if (kept.length === 1) return part(kept[0]!)
    }
    error ??= `a template literal placeholder \${${checker.typeToString(t)}} has no persisted shape (use string, number or a literal union)`
    return [checker.typeToString(t), '[\\s\\S]*']
  }
  const whole = (t: ts.TemplateLiteralType): [string, string] => {
    let text = raw(t.texts[0] ?? '')
    let pattern = esc(t.texts[0] ?? '')
    t.types.forEach((m, i) => {
      const [mt, mp] = part(m)
      text += `\${${mt}}${raw(t.texts[i + 1] ?? '')}`
      pattern += mp + esc(t.texts[i + 1] ?? '')
    })
    return [text, pattern]
  }
  if (type.flags & F.TemplateLiteral) {
    const [text, pattern] = whole(type as ts.TemplateLiteralType)
    return { text: `\`${text}\``, pattern: `^${pattern}$`, aliases, ...(error ? { error } : {}) }
  }
  const [text, pattern] = part(type)
  return { text, pattern: `^${pattern}$`, aliases, ...(error ? { error } : {}) }
}

/** A module's exports by name, aliases resolved to what they re-export. */
export function moduleExports(checker: ts.TypeChecker, mod: ts.Symbol): Map<string, ts.Symbol> {
  const map = new Map<string, ts.Symbol>()
  for (const s of checker.getExportsOfModule(mod)) {
    map.set(s.name, s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)
  }
  return map
}
