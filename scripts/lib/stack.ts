import { spawn, type ChildProcess } from 'node:child_process'

export interface RunningStack {
  child: ChildProcess
  appUrl: string
  gatewayUrl: string
  /** The deal service's URL (`--role all`). */
  serviceUrl?: string
  /** Everything the process wrote to stdout so far. */
  output(): string
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** Resolves with the exit code once the process has exited, however it was stopped. */
  exited: Promise<number | null>
}

export interface StackOptions {
  /**
   * Runs the stack as the leader of a process group of its own, as a service
   * manager or a terminal does, so that a test can signal the whole group.
   */
  ownProcessGroup?: boolean
  /** Longest the stack may take to listen (default 90 s: loading its modules alone takes 30 s on a loaded two-core machine). */
  readyTimeoutMs?: number
}

/**
 * Starts `npm start`'s entry point (server/main.ts) as its own process on free
 * ports and resolves once both parts log that they listen. A variable given
 * as undefined is left unset (the stack's own default). `entry` is the file
 * run instead of server/main.ts (a crash test's, test/helpers/crash-entry.ts).
 */
export function startStack(
  env: Record<string, string | undefined>,
  args: string[] = [],
  entry = 'server/main.ts',
  options: StackOptions = {},
): Promise<RunningStack> {
  const merged: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    GATEWAY_PORT: '0',
    SERVICE_PORT: '0',
    SIMNET_RPC_PORT: '0',
    SIMFOC_RPC_PORT: '0',
    SIMFOC_PROVIDERS: '0',
    TICKER_ENABLED: 'false',
    LOG_LEVEL: 'info',
    ...env,
  }
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    env: Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownProcessGroup ?? false,
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Stopped, not left behind: a stack that never came up would otherwise keep running for good.
      child.kill('SIGTERM')
      reject(new Error(`stack did not start:\n${out}\n${err}`))
    }, options.readyTimeoutMs ?? 90_000)
    const check = () => {
      const app = out.match(/"url":"(http:[^"]+)"[^\n]*app surface listening/)
      const gateway = out.match(/"url":"(http:[^"]+)"[^\n]*gateway listening/)
      const service = out.match(/"url":"(http:[^"]+)"[^\n]*deal service listening/)
      if (!app || !gateway) return
      clearTimeout(timer)
      child.stdout!.off('data', check)
      resolve({
        child,
        appUrl: app[1],
        gatewayUrl: gateway[1],
        serviceUrl: service?.[1],
        output: () => out,
        stop: (signal = 'SIGTERM') => {
          child.kill(signal)
          return exited
        },
        exited,
      })
    }
    child.stdout!.on('data', check)
    void exited.then((code) => reject(new Error(`stack exited with ${code}:\n${out}\n${err}`)))
  })
}

export const basicAuth = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')

export interface RunningPart {
  url: string
  pid: number
  output(): string
  stop(): Promise<number | null>
}

const LISTENING: Record<string, string> = { app: 'app surface listening', gateway: 'gateway listening', service: 'deal service listening' }

/**
 * Starts one part (`npm start -- --role <role>`) as its own process and resolves with its URL once it listens;
 * `onOutput` sees what it prints as it prints it (a test that kills it on a line).
 */
export function startPart(
  role: 'app' | 'gateway' | 'service',
  env: Record<string, string>,
  onOutput?: (text: string) => void,
): Promise<RunningPart> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', role], {
    env: { ...process.env, TICKER_ENABLED: 'false', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString()
    onOutput?.(c.toString())
  })
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} did not start:\n${out}`)), 90_000)
    const check = () => {
      const url = new RegExp(`"url":"(http:[^"]+)"[^\\n]*${LISTENING[role]}`).exec(out)?.[1]
      if (!url) return
      clearTimeout(timer)
      child.stdout!.off('data', check)
      resolve({
        url,
        pid: child.pid!,
        output: () => out,
        stop: () => {
          if (child.exitCode === null) child.kill('SIGTERM')
          return exited
        },
      })
    }
    child.stdout!.on('data', check)
    void exited.then((code) => reject(new Error(`${role} exited with ${code}:\n${out}`)))
  })
}
