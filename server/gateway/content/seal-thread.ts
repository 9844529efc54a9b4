import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { writeCarFile, type CarJob } from './group-car.ts'

/** Messages between the seal pool and a sealing thread. */
export type ToThread = { type: 'seal'; job: CarJob }
export type FromThread =
  { type: 'sealed'; car: Awaited<ReturnType<typeof writeCarFile>> } | { type: 'failed'; message: string; code?: string }

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
// One job at a time: the pool sends the next only after an answer.
port.on('message', ({ job }: ToThread) => {
  writeCarFile(job).then(
    (car) => port.postMessage({ type: 'sealed', car } satisfies FromThread),
    (err: NodeJS.ErrnoException) => port.postMessage({ type: 'failed', message: err.message, code: err.code } satisfies FromThread),
  )
})
