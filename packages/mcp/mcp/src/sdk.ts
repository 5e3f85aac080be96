// The MCP SDK and Ajv, loaded on first use: they cost hundreds of milliseconds to import,
// and an agent with no MCP server configured (the `coding` preset's default) never pays it.
import type { Ajv as AjvDraft7 } from 'ajv'
import type { Ajv2020 } from 'ajv/dist/2020.js'

/** The modules a connection and a schema compile need. */
export interface Sdk {
  readonly client: typeof import('@modelcontextprotocol/sdk/client/index.js')
  readonly stdio: typeof import('@modelcontextprotocol/sdk/client/stdio.js')
  readonly http: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')
  readonly sse: typeof import('@modelcontextprotocol/sdk/client/sse.js')
  readonly types: typeof import('@modelcontextprotocol/sdk/types.js')
  readonly Ajv: typeof AjvDraft7
  readonly Ajv2020: typeof Ajv2020
  readonly addFormats: (ajv: AjvDraft7 | Ajv2020) => unknown
}

let loading: Promise<Sdk> | undefined

/** Loads the SDK once per process (later calls share the first load). */
export function loadSdk(): Promise<Sdk> {
  loading ??= (async () => {
    const [client, stdio, http, sse, types, ajv, ajv2020, formats] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/sse.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('ajv'),
      import('ajv/dist/2020.js'),
      import('ajv-formats'),
    ])
    const plugin = formats.default as unknown
    const addFormats = (
      typeof plugin === 'function' ? plugin : (plugin as { default: unknown }).default
    ) as Sdk['addFormats']
    return {
      client,
      stdio,
      http,
      sse,
      types,
      Ajv: named<Sdk['Ajv']>(ajv, 'Ajv'),
      Ajv2020: named<Sdk['Ajv2020']>(ajv2020, 'Ajv2020'),
      addFormats,
    }
  })()
  return loading
}

/**
 * The export `name` of a CommonJS module loaded with `import()`: Node gives its named exports,
 * a bundle (esbuild with code splitting) only the default one, `module.exports`.
 */
function named<T>(module: object, name: string): T {
  const own = (module as Record<string, unknown>)[name]
  const value = own ?? (module as { default?: Record<string, unknown> }).default?.[name]
  if (typeof value !== 'function') throw new Error(`the module loaded for ${name} does not export it`)
  return value as T
}
