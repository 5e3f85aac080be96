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
  return props.every((p) => p.name.startsWith('__@'))
}

/** The value of a boolean literal type. */
export function boolValue(type: ts.Type): boolean {
  return (type as { intrinsicName?: string }).intrinsicName === 'true'
}

/** The regular expression (anchored) that the strings of a template literal type match. */
export function templatePattern(type: ts.Type): string {
  const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  const part = (t: ts.Type): string => {
    if (t.flags & ts.TypeFlags.StringLiteral) return esc((t as ts.StringLiteralType).value)
    if (t.flags & ts.TypeFlags.NumberLiteral) return esc(String((t as ts.NumberLiteralType).value))
    if (t.flags & ts.TypeFlags.Number) return '-?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?'
    if (t.flags & ts.TypeFlags.BooleanLiteral) return boolValue(t) ? 'true' : 'false'
    if (t.flags & ts.TypeFlags.Boolean) return '(?:true|false)'
    if (t.flags & ts.TypeFlags.Union) return `(?:${(t as ts.UnionType).types.map(part).join('|')})`
    if (t.flags & ts.TypeFlags.TemplateLiteral) return inner(t as ts.TemplateLiteralType)
    return '[\\s\\S]*'
  }
  const inner = (t: ts.TemplateLiteralType): string => {
    let out = esc(t.texts[0] ?? '')
    t.types.forEach((m, i) => {
      out += part(m) + esc(t.texts[i + 1] ?? '')
    })
    return out
  }
  if (type.flags & ts.TypeFlags.TemplateLiteral) return `^${inner(type as ts.TemplateLiteralType)}$`
  return '^[\\s\\S]*$'
}

/** A module's exports by name, aliases resolved to what they re-export. */
export function moduleExports(checker: ts.TypeChecker, mod: ts.Symbol): Map<string, ts.Symbol> {
  const map = new Map<string, ts.Symbol>()
  for (const s of checker.getExportsOfModule(mod)) {
    map.set(s.name, s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)
  }
  return map
}
