// Declarations as written: JSDoc text, `@example`, and the source text the catalog shows.
import { ts } from 'ts-morph'

function jsDocStart(node: ts.Node, sf: ts.SourceFile): number | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  if (docs.length === 0) return undefined
  return docs[0]!.getStart(sf)
}

export function hasDocText(node: ts.Node): boolean {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  return docs.some((d) => {
    const c = d.comment
    const text = typeof c === 'string' ? c : (c ?? []).map((x) => x.text).join('')
    return text.trim().length > 0 || (d.tags?.length ?? 0) > 0
  })
}

/** The JSDoc text of a declaration without its tags. */
export function docTextOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  return docs
    .map((d) => (typeof d.comment === 'string' ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? '')))
    .join('\n')
    .trim()
}

export function exampleOf(node: ts.Node): { example?: string } {
  const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === 'example')
  const text = tag ? ts.getTextOfJSDocComment(tag.comment)?.trim() : undefined
  return text ? { example: text } : {}
}

/** The text from the node's JSDoc (or its start) to its end, dedented by its column. */
export function declarationText(node: ts.Node, sf: ts.SourceFile): string {
  const start = jsDocStart(node, sf) ?? node.getStart(sf)
  const text = sf.text.slice(start, node.getEnd())
  const col = start - sf.getLineAndCharacterOfPosition(start).character
  const indent = sf.text.slice(col, start)
  if (!/^[ \t]*$/.test(indent) || indent.length === 0) return text
  return text
    .split('\n')
    .map((line, i) => (i > 0 && line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')
}
