import { readdirSync, readlinkSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { openFileLimit } from '../../server/shared/connection-cap.ts'
import { percentile } from './percentile.ts'

/**
 * What strangers without credentials can do to the app surface, on loopback:
 * guesses sent all at once against the login throttle, and thousands of
 * slow clients trickling login bodies (each from its own 127.0.x.y
 * address, as a botnet would) against the connection caps and deadlines.
 */
export async function benchAttack(o: { appUrl: string; appPid: number | undefined; slowClients: number }): Promise<void> {
  const url = new URL(o.appUrl)
  console.log('\nattack on the app surface, without credentials (loopback)')

  // 300 wrong passwords at once from one address, over 100 connections.
  const agent = new Agent({ keepAlive: true, maxSockets: 100 })
  const statuses = await Promise.all(Array.from({ length: 300 }, (_, i) => login(url, agent, `guess-${i}`)))
  agent.destroy()
  const count = (s: number) => statuses.filter((x) => x === s).length
  console.log(
    `  300 parallel wrong passwords: ${count(401)} checked (401), ${count(429)} refused by the throttle (429), ${count(503)} refused by the connection cap, ${statuses.length - count(401) - count(429) - count(503)} other (target: at most 10 checked)`,
  )

  // Slow clients: as many as this process's own descriptors allow.
  const limit = openFileLimit() ?? 1024
  const wanted = Math.min(o.slowClients, limit - 1_000)
  const sockets: Socket[] = []
  let refused = 0
  let timedOut = 0
  let answered = 0
  const started = performance.now()
  for (let i = 0; i < wanted; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, wanted - i) }, (_, j) =>
        slowLogin(url, `127.0.${1 + Math.floor((i + j) / 200)}.${1 + ((i + j) % 200)}`).then(
          (s) => {
            sockets.push(s)
            let answer = ''
            s.on('data', (d) => {
              if (!answer) answered++
              answer += d
              if (answer.startsWith('HTTP/1.1 503')) refused++
              else if (answer.startsWith('HTTP/1.1 408')) timedOut++
            })
          },
          () => undefined,
        ),
      ),
    )
  }
  const opened = performance.now() - started
  const trickle = setInterval(() => {
    for (const s of sockets) if (s.writable) s.write('x')
  }, 5_000)
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  const held = socketCount(o.appPid)
  // status.php from the usual address while the attack holds its connections.
  const latencies: number[] = []
  let failures = 0
  for (let i = 0; i < 200; i++) {
    const t0 = performance.now()
    try {
      const res = await fetch(`${o.appUrl}/status.php`)
      await res.arrayBuffer()
      if (res.status !== 200) failures++
    } catch {
      failures++
    }
    latencies.push(performance.now() - t0)
  }
  const p = (q: number) => percentile(latencies, q).toFixed(1)
  console.log(
    `  ${sockets.length} slow POST /login clients, each from its own address (this process may hold ${limit} descriptors), opened in ${(opened / 1000).toFixed(1)} s`,
  )
  console.log(
    `  connections the app holds: ${held ?? 'unknown (no /proc)'} (MAX_CONNECTIONS is half the app's open-file limit); refused with 503: ${refused}; closed unanswered to make room for newer clients: ${sockets.filter((s) => s.destroyed || s.readableEnded).length - answered}`,
  )
  console.log(`  status.php meanwhile: ${200 - failures}/200 answered, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms`)
  // Each trickling body is cut by the body deadline (BODY_TIMEOUT_SECONDS, 30 s).
  const deadline = performance.now() + 45_000
  while (performance.now() < deadline && sockets.some((s) => !s.destroyed && !s.readableEnded))
    await new Promise((resolve) => setTimeout(resolve, 500))
  clearInterval(trickle)
  console.log(
    `  cut by the body deadline with 408: ${timedOut}; still open after ${((performance.now() - started) / 1000).toFixed(0)} s: ${sockets.filter((s) => !s.destroyed && !s.readableEnded).length}`,
  )
  for (const s of sockets) s.destroy()
}

function login(url: URL, agent: Agent, password: string): Promise<number> {
  const body = new URLSearchParams({ user: 'admin', password }).toString()
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/login',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', () => resolve(0))
    req.end(body)
  })
}

function slowLogin(url: URL, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: url.hostname, port: Number(url.port), localAddress }, () => {
      s.write(
        `POST /login HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nu`,
      )
      resolve(s)
    })
    s.on('error', () => undefined)
    s.once('error', reject)
  })
}

/** Sockets a process holds, from /proc (Linux). */
function socketCount(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')
      } catch {
        return false
      }
    }).length
  } catch {
    return undefined
  }
}
