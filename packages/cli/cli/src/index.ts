export { type CliIo, describeEvent, runCli } from './commands.js'
export {
  demoAnswer,
  demoFiles,
  demoScript,
  demoSystemPrompt,
  demoTask,
  writeDemoWorkspace,
} from './demo-task.js'
export { createRenderer, oneLine, type RenderTarget, summarizeArguments, summarizeResult } from './render.js'
export { type DemoIo, type DemoOutcome, runDemo } from './run-demo.js'
