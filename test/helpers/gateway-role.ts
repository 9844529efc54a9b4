import { spawn } from 'node:child_process'

/**
 * Runs `npm start -- --role gateway` with `env` (on any free port, logging
 * JSON at info) until it listens, then stops it, or until it exits by itself;
 * resolves with everything it wrote and its exit code.
 */
export function runGatewayRole(env: Record<string, string>): Promise<{ out: string; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'gateway'], {
    env: { ...process.env, GATEWAY_PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  return new Promise((resolve, reject) => {
    // Fifty seconds (within the tests' minute): on a loaded machine loading the gateway's modules alone has taken tens of seconds.
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`gateway neither started nor stopped:\n${out}`))
    }, 50_000)
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      if (out.includes('gateway listening')) child.kill('SIGTERM')
    })
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()))
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ out, code })
    })
  })
}
