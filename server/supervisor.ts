import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { createBackoff } from './shared/disk.ts'
import { createLineLimit, leftOutField } from './shared/line-limit.ts'
import type { Logger } from './shared/logger.ts'

/** What a part tells its supervisor once it listens (over the IPC channel). */
export interface PartReady {
  url: string
  [detail: string]: unknown
}

export interface PartSpec {
  name: string
  /** Arguments after the entry script, e.g. `['--role', 'gateway']`. */
  args: string[]
  /** Environment of the child on each (re)start, from what the parts before it announced. */
  env(ready: ReadonlyMap<string, PartReady>): Record<string, string>
}

export interface SupervisorOptions {
  /** The script each part runs (server/main.ts), started as `node --import tsx <entry> ...args`. */
  entry: string
  parts: PartSpec[]
  logger: Logger
  /** Where the children's log lines go, one line at a time (the supervisor's stdout). */
  output(line: string): void
  /** Longest a part may take to announce itself. */
  readyTimeoutMs?: number
  /** Longest a part may take to stop after SIGTERM before it is killed. */
  stopGraceMs?: number
  /** Waits before restarting a part that died: first, longest; reset once it has run `stableMs`. */
  restart?: { firstMs: number; maxMs: number; stableMs: number }
}

export interface Supervisor {
  /** Starts the parts in order, each once the one before has announced itself. */
  start(): Promise<ReadonlyMap<string, PartReady>>
  /** The running child of a part (tests kill it to see it come back). */
  child(name: string): ChildProcess | undefined
  /** Stops the parts in reverse order; resolves when all have exited. */
  stop(): Promise<void>
}

/** How long a stopped part's last lines may take to come through once it has exited. */
const OUTPUT_GRACE_MS = 2_000

/** Sent by a part to its supervisor once it listens; nothing happens when it runs on its own. */
export function announceReady(info: PartReady): void {
  process.send?.({ type: 'ready', ...info })
}

/**
 * Runs each part of the stack as its own process, so that one part's CPU
 * storm or crash does not take the others down: starts them in order, passes
 * on where each listens, merges their logs into one stream, restarts a part
 * that dies (with back-off), and stops them in reverse order.
 */
export function createSupervisor(o: SupervisorOptions): Supervisor {
  const readyTimeoutMs = o.readyTimeoutMs ?? 60_000
  const stopGraceMs = o.stopGraceMs ?? 15_000
  const restart = o.restart ?? { firstMs: 1_000, maxMs: 30_000, stableMs: 60_000 }
  const ready = new Map<string, PartReady>()
  const running = new Map<string, ChildProcess>()
  /** Per child: settles once it has exited and its output has been passed on. */
  const done = new WeakMap<ChildProcess, Promise<void>>()
  let stopping = false
  const stderrLines = createLineLimit({ perWindow: 200 })

  /** Spawns one part and resolves with its announcement, or rejects when it exits first. */
  function spawnPart(spec: PartSpec): Promise<PartReady> {
    const child = spawn(process.execPath, ['--import', 'tsx', o.entry, ...spec.args], {
      env: { ...process.env, ...spec.env(ready) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    running.set(spec.name, child)
    // 'close' comes after 'exit' once the part's last output has been read: only then is the part done.
    // Bounded, should something the part started still hold its output open.
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
    done.set(child, Promise.race([closed, exited.then(() => sleep(OUTPUT_GRACE_MS, undefined, { ref: false }))]))
    const startedAt = Date.now()
    createInterface({ input: child.stdout! }).on('line', o.output)
    // A part in trouble may write a stack a line at a time, over and over: a few hundred lines a minute, then a count.
    createInterface({ input: child.stderr! }).on('line', (line) =>
      stderrLines(spec.name, (leftOut) =>
        o.logger.warn({ part: spec.name, stderr: line, ...leftOutField(leftOut) }, 'part wrote to stderr'),
      ),
    )
    o.logger.debug({ part: spec.name, pid: child.pid }, 'part started')

    const announced = new Promise<PartReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.name} did not start within ${readyTimeoutMs} ms`)), readyTimeoutMs)
      child.on('message', (m: { type?: string } & PartReady) => {
        if (m?.type !== 'ready') return
        clearTimeout(timer)
        const { type: _type, ...info } = m
        ready.set(spec.name, info)
        resolve(info)
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`${spec.name} exited before it was ready (${signal ?? `code ${code}`})`))
      })
    })
    child.once('exit', (code, signal) => {
      if (running.get(spec.name) === child) running.delete(spec.name)
      if (stopping) return
      const backoff = backoffs.get(spec.name)!
      if (Date.now() - startedAt >= restart.stableMs) backoff.reset()
      const delayMs = backoff.fail()
      o.logger.error({ part: spec.name, pid: child.pid, code, signal, restartInMs: delayMs }, 'part died; restarting it')
      setTimeout(() => {
        if (stopping) return
        spawnPart(spec).then(
          (info) => o.logger.info({ part: spec.name, url: info.url }, 'part restarted'),
          (err) => o.logger.error({ part: spec.name, err: (err as Error).message }, 'restarting the part failed; trying again'),
        )
      }, delayMs).unref()
    })
    return announced
  }

  const backoffs = new Map(o.parts.map((p) => [p.name, createBackoff(restart.firstMs, restart.maxMs)]))

  /**
   * Stops a part and waits until its last line has been passed on. A part that
   * the process group's SIGTERM already stopped is only waited for.
   */
  async function stopChild(child: ChildProcess): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    const force = setTimeout(() => child.kill('SIGKILL'), stopGraceMs)
    await done.get(child)
    clearTimeout(force)
  }

  return {
    async start() {
      for (const spec of o.parts) {
        if (stopping) break
        await spawnPart(spec)
      }
      return ready
    },
    child: (name) => running.get(name),
    async stop() {
      stopping = true
      // Taken now: a part that exits meanwhile leaves `running`, but its output is still to be waited for.
      const children = [...o.parts].reverse().map((spec) => running.get(spec.name))
      // Front first, so nothing new reaches a part that is draining.
      for (const child of children) if (child) await stopChild(child)
    },
  }
}
