import { Worker } from 'node:worker_threads'
import type { Logger } from '../../shared/logger.ts'
import type { CarJob, CarSealer, GroupCar } from './group-car.ts'
import type { FromThread, ToThread } from './seal-thread.ts'

export interface SealPool extends CarSealer {
  readonly size: number
  close(): Promise<void>
}

interface Waiting {
  job: CarJob
  resolve: (car: GroupCar) => void
  reject: (err: Error) => void
}

/**
 * Worker threads that write CARs and compute piece CIDs, so sealing uses
 * every core and never holds up requests on the main thread. Threads start
 * when first needed; one that dies (it should not) fails its job, which the
 * lifecycle retries, and is replaced.
 */
export function createSealPool(options: { size: number; logger: Logger }): SealPool {
  const idle: Worker[] = []
  const queue: Waiting[] = []
  const all = new Set<Worker>()
  let closed = false

  const run = (worker: Worker, w: Waiting) => {
    const done = (fn: () => void) => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      fn()
    }
    const onMessage = (m: FromThread) => {
      if (m.type === 'sealed') {
        done(() => w.resolve(m.car))
        release(worker)
      } else {
        done(() => w.reject(Object.assign(new Error(m.message), { code: m.code })))
        release(worker)
      }
    }
    const onError = (err: Error) => done(() => w.reject(err))
    const onExit = (code: number) => {
      all.delete(worker)
      done(() => w.reject(new Error(`sealing thread exited (${code})`)))
      next()
    }
    worker.on('message', onMessage)
    worker.once('error', onError)
    worker.once('exit', onExit)
    worker.postMessage({ type: 'seal', job: w.job } satisfies ToThread)
  }

  const release = (worker: Worker) => {
    idle.push(worker)
    next()
  }

  const next = () => {
    while (!closed && queue.length > 0) {
      let worker = idle.pop()
      if (!worker && all.size < options.size) {
        worker = new Worker(new URL('./seal-worker.mjs', import.meta.url))
        all.add(worker)
        worker.once('exit', () => all.delete(worker!))
      }
      if (!worker) return
      run(worker, queue.shift()!)
    }
  }

  return {
    size: options.size,
    seal(job) {
      if (closed) return Promise.reject(new Error('the seal pool is closed'))
      return new Promise<GroupCar>((resolve, reject) => {
        queue.push({ job, resolve, reject })
        next()
      })
    },
    async close() {
      closed = true
      for (const w of queue.splice(0)) w.reject(new Error('the seal pool is closed'))
      await Promise.all([...all].map((w) => w.terminate()))
      options.logger.debug({ threads: all.size }, 'seal pool closed')
    },
  }
}
