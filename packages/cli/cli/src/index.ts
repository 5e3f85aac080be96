export { KEEL_SYSTEM_PROMPT } from './agent-run.js'
export { describeEvent, EXIT, type Interrupt, runCli } from './commands.js'
export { DeferredSession } from './deferred-session.js'
export {
  demoAnswer,
  demoFiles,
  demoScript,
  demoSystemPrompt,
  demoTask,
  lastBashOutput,
  type TestOutcome,
  testOutcome,
  writeDemoWorkspace,
} from './demo-task.js'
export { sessionToHtml } from './export-html.js'
export type { CliIo, Terminal } from './io.js'
export {
  createJsonLines,
  type JsonLines,
  jsonLine,
  OUTPUT_CAPABILITIES,
  OUTPUT_SCHEMA_VERSION,
  permissionDenials,
  resultObject,
  stamp,
  type TurnReport,
  usageOf,
} from './json-output.js'
export { parseDuration, selectLlm } from './llm.js'
export { inputLineValidators, outputLineValidators } from './output-lines.generated.js'
export type * from './output-lines.js'
export { type Cost, costOf, type PriceTable, priceTable } from './pricing.js'
export { createRenderer, oneLine, type RenderTarget, summarizeArguments, summarizeResult } from './render.js'
export { type DemoIo, type DemoOutcome, runDemo } from './run-demo.js'
export { closest, editDistance, UsageError } from './usage.js'
