import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { writeCarFile, type CarJob } from './group-car.ts'

/** Messages between the seal pool and a sealing thread. */
export type ToThread = { type: 'seal'; job: CarJob; pauseAfterFirstBlock: boolean } | { type: 'resume' }
export type FromThread =
  | { type: 'sealed'; car: Awaited<ReturnType<typeof writeCarFile>> }
  | { type: 'failed'; message: string; code?: string }
  | { type: 'paused' }

const port = parentPort!

/**
 * Sealing is background work: on a busy machine this thread yields the CPU
 * to the one answering requests, so an upload reaches its CID as fast with
 * groups sealing beside it, and sealing takes whatever time is left. Linux
 * sets a nice value per thread, and names this thread in /proc/thread-self;
 * elsewhere the thread keeps the process's priority.
 */
const SEALING_NICE = 10
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), SEALING_NICE)
} catch {
  // Not Linux, or not allowed: sealing competes on equal terms.
}
let resume: (() => void) | undefined

// One job at a time: the pool sends the next only after an answer.
port.on('message', (message: ToThread) => {
  if (message.type === 'resume') {
    resume?.()
    return
  }
  const { job, pauseAfterFirstBlock } = message
  const afterFirstBlock = async () => {
    if (!pauseAfterFirstBlock) return
    // Crash tests stop here: the main thread runs its pause hook, then lets the job go on.
    const resumed = new Promise<void>((resolve) => (resume = resolve))
    port.postMessage({ type: 'paused' } satisfies FromThread)
    await resumed
  }
  writeCarFile(job, afterFirstBlock).then(
    (car) => port.postMessage({ type: 'sealed', car } satisfies FromThread),
    (err: NodeJS.ErrnoException) => port.postMessage({ type: 'failed', message: err.message, code: err.code } satisfies FromThread),
  )
})
