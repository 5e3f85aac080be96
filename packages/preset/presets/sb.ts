import { osSandboxAvailable } from '@keel/user-approval'

console.log(await osSandboxAvailable())
