// A sealing worker thread: TypeScript is loaded through tsx here, as the main thread does.
import { register } from 'tsx/esm/api'

register()
await import('./seal-thread.ts')
