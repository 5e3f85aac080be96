// What an MCP tool is and what it returned, in Keel's terms: the four annotations (absent
// hints mean the fail-closed defaults of the MCP spec), and the call's result as text and
// image blocks for the model, with resources and links described in text.
import { errorResultText, type ImageBlock, type ImageMediaType, type TextBlock } from '@keel/llm'
import type { ToolAnnotations, ToolOutput } from '@keel/tools'

/** The MCP hints a tool may declare (`annotations` of `tools/list`); all optional, all untrusted. */
export interface McpToolHints {
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/**
 * Keel's annotations from a tool's MCP hints, with the spec's defaults for absent ones:
 * not read-only, destructive, not idempotent, open-world — so an unannotated tool is asked
 * about like a writing, networked tool. `destructive` and `idempotent` mean something only
 * for a tool that is not read-only. A remote server's tool is open-world whatever it says:
 * every call sends its arguments off this machine.
 */
export function toKeelAnnotations(hints: McpToolHints | undefined, remote: boolean): ToolAnnotations {
  const h = hints ?? {}
  const readOnly = h.readOnlyHint === true
  return {
    readOnly,
    destructive: readOnly ? false : h.destructiveHint !== false,
    idempotent: readOnly ? true : h.idempotentHint === true,
    openWorld: remote ? true : h.openWorldHint !== false,
  }
}

const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

/** A result's content block, as loosely as servers send them (validated here, not trusted). */
type Block = Record<string, unknown>

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

function text(value: string): TextBlock {
  return { type: 'text', text: value }
}

function image(data: string, mediaType: string): ImageBlock {
  return { type: 'image', mediaType: mediaType as ImageMediaType, data }
}

/** Base64 characters → bytes, roughly (for telling the model what it is not shown). */
function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4)
}

function resourceBlocks(resource: Block): Array<TextBlock | ImageBlock> {
  const uri = str(resource.uri) ?? '(no uri)'
  const mime = str(resource.mimeType)
  const label = `[resource ${uri}${mime ? ` (${mime})` : ''}]`
  const body = str(resource.text)
  if (body !== undefined) return [text(`${label}\n${body}`)]
  const blob = str(resource.blob)
  if (blob !== undefined && mime !== undefined && IMAGE_TYPES.has(mime))
    return [text(label), image(blob, mime)]
  if (blob !== undefined)
    return [text(`${label} binary content, about ${base64Bytes(blob)} bytes, not shown`)]
  return [text(label)]
}

function blockToKeel(block: Block): Array<TextBlock | ImageBlock> {
  switch (block.type) {
    case 'text':
      return [text(str(block.text) ?? '')]
    case 'image': {
      const data = str(block.data)
      const mime = str(block.mimeType)
      if (data !== undefined && mime !== undefined && IMAGE_TYPES.has(mime)) return [image(data, mime)]
      return [text(`[image${mime ? ` (${mime})` : ''} in a format the model cannot be shown]`)]
    }
    case 'audio': {
      const data = str(block.data) ?? ''
      return [
        text(
          `[audio${str(block.mimeType) ? ` (${str(block.mimeType)})` : ''}, about ${base64Bytes(data)} bytes, not shown]`,
        ),
      ]
    }
    case 'resource':
      return block.resource !== null && typeof block.resource === 'object'
        ? resourceBlocks(block.resource as Block)
        : [text('[resource without content]')]
    case 'resource_link': {
      const uri = str(block.uri) ?? '(no uri)'
      const name = str(block.name)
      const mime = str(block.mimeType)
      const description = str(block.description)
      return [
        text(
          `[resource link ${uri}${name && name !== uri ? ` "${name}"` : ''}${mime ? ` (${mime})` : ''}${description ? `: ${description}` : ''}]`,
        ),
      ]
    }
    default:
      return [text(`[content of type ${JSON.stringify(String(block.type)).slice(0, 60)} not shown]`)]
  }
}

/**
 * A `tools/call` result as a Keel tool output: text and images as blocks, embedded
 * resources as their text (or image, or a note for other binary content), links and audio
 * described. `structuredContent` is shown as JSON when the server sent no content. A result
 * with `isError` is an error output (`MCP_TOOL_ERROR`) carrying what the tool said. The
 * runtime then caps it like any tool's output.
 */
export function toToolOutput(result: Record<string, unknown>, qualifiedName: string): ToolOutput {
  const raw = Array.isArray(result.content) ? (result.content as unknown[]) : []
  const content: Array<TextBlock | ImageBlock> = []
  for (const block of raw) {
    if (block !== null && typeof block === 'object') content.push(...blockToKeel(block as Block))
  }
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push(text(JSON.stringify(result.structuredContent, null, 2) ?? 'null'))
  }
  if (result.isError === true) {
    const said = content.length > 0 ? content : [text('(the tool gave no details)')]
    return {
      content: [text(errorResultText('MCP_TOOL_ERROR', `${qualifiedName} reported an error:`)), ...said],
      isError: true,
      errorCode: 'MCP_TOOL_ERROR',
    }
  }
  if (content.length === 0) content.push(text('(no output)'))
  return { content }
}
