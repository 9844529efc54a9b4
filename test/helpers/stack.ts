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
}

/**
 * Starts `npm start`'s entry point (server/main.ts) as its own process on free
 * ports and resolves once both parts log that they listen. A variable given
 * as undefined is left unset (the stack's own default).
 */
export function startStack(env: Record<string, string | undefined>, args: string[] = []): Promise<RunningStack> {
  const merged: Record<string, string | undefined> = { ...process.env, PORT: '0', GATEWAY_PORT: '0', SERVICE_PORT: '0', SIMNET_RPC_PORT: '0', TICKER_ENABLED: 'false', LOG_LEVEL: 'info', ...env }
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    env: Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stack did not start:\n${out}\n${err}`)), 30_000)
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
      })
    }
    child.stdout!.on('data', check)
    void exited.then((code) => reject(new Error(`stack exited with ${code}:\n${out}\n${err}`)))
  })
}

export const basicAuth = (user: string, password: string) =>
  'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')
