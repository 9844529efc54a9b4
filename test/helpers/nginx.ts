import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Debian's nginx, when installed (tests using it are skipped, and say so, where it is not). */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p))

/** One of our nginx recipes (scripts/nginx/), to be run with its ports replaced. */
export const recipe = (name: string) => readFileSync(join(import.meta.dirname, '..', '..', 'scripts', 'nginx', name), 'utf8')

/** Resolves once something accepts connections on the port, or rejects when nginx exits first. */
async function waitForPort(port: number, child: ChildProcess, errorLog: string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited ${child.exitCode}: ${existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy()
        resolve(true)
      })
      socket.on('error', () => resolve(false))
    })
    if (open) return
    await new Promise((r) => setTimeout(r, 50))
  }
}

export interface RunningNginx {
  stop(): Promise<void>
}

/**
 * Runs nginx in the foreground with `serverConfig` (what goes inside `http { }`)
 * in a temporary prefix, and resolves once `port` accepts connections.
 */
export async function startNginx(serverConfig: string, port: number): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-test-'))
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) mkdirSync(join(dir, sub))
  writeFileSync(join(dir, 'servers.conf'), serverConfig)
  const errorLog = join(dir, 'logs', 'error.log')
  // Root (CI) would hand workers to "nobody", who cannot write the temp dirs.
  const user = process.getuid?.() === 0 ? 'user root;\n' : ''
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${user}worker_processes 1;
error_log ${errorLog} warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/servers.conf;
}
`,
  )
  const nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', errorLog, '-g', `daemon off; pid ${dir}/nginx.pid;`], {
    stdio: 'ignore',
  })
  try {
    await waitForPort(port, nginx, errorLog)
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  return {
    async stop() {
      if (nginx.exitCode === null) {
        const exited = new Promise((resolve) => nginx.once('exit', resolve))
        nginx.kill('SIGTERM')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
