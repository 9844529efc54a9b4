import { percentile } from './percentile.ts'

/**
 * Many Files lists polling one large folder's badges, and what that does to
 * someone else: a second user's get-file-metadata (a file of their own)
 * measured alone, then while `pollers` clients of the first user ask for the
 * folder's states back to back. Twice: as clients that ask for the whole
 * folder every time (the plugin before paging), and as the plugin now asks
 * (the names of one screen of rows, with the ETag of its previous answer).
 * A bridge without `names` answers the second kind 400: its figures then
 * say nothing of paging.
 */
export async function benchBadgePollers(o: {
  appUrl: string
  auth: string
  folder: string
  /** Names of the rows one screen of the Files list shows. */
  screen: string[]
  other: { auth: string; filePath: string }
  pollers: number
  seconds: number
}): Promise<void> {
  /** One call; a connection the app cut or refused counts as status 0, as a failure, not the end of the run. */
  const ocs = async (auth: string, route: string, body: unknown, headers: Record<string, string> = {}) => {
    try {
      const res = await fetch(`${o.appUrl}/ocs/v2.php/apps/gateway/${route}`, {
        method: 'POST',
        headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
      const read = (await res.arrayBuffer()).byteLength
      // fetch takes gzip and unpacks it: the bytes on the wire are the header's.
      const bytes = Number(res.headers.get('content-length') ?? read)
      return { status: res.status, bytes, etag: res.headers.get('etag') ?? undefined }
    } catch {
      return { status: 0, bytes: 0, etag: undefined }
    }
  }

  /** The other user's metadata, one request after another, until `until` resolves (at least `min` requests). */
  const metadata = async (until: Promise<unknown>, min: number) => {
    let done = false
    void until.then(() => (done = true))
    const ms: number[] = []
    const failed: number[] = []
    while (!done || ms.length < min) {
      const t0 = performance.now()
      const res = await ocs(o.other.auth, 'get-file-metadata', { filePath: o.other.filePath })
      // A failure (a 504 once the gateway is swamped, 0 for a cut connection) counts with the time it took.
      if (res.status !== 200) failed.push(res.status)
      ms.push(performance.now() - t0)
    }
    return Object.assign(ms, { failed })
  }
  const figures = (ms: number[] & { failed: number[] }) =>
    `p50 ${percentile(ms, 0.5).toFixed(1)} ms, p99 ${percentile(ms, 0.99).toFixed(1)} ms (${ms.length} requests${ms.failed.length ? `, ${ms.failed.length} failed: ${[...new Set(ms.failed)].join(', ')}` : ''})`

  const alone = await metadata(Promise.resolve(), 200)
  console.log(`  other user's metadata, alone       : ${figures(alone)}`)

  const poll = async (mode: 'whole' | 'screen') => {
    // The pollers run from a second before the timing starts until it ends: every request timed meets all of them.
    let stopped = false
    const statuses = new Map<number, number>()
    let bytes = 0
    const started = performance.now()
    const poller = async () => {
      let etag: string | undefined
      while (!stopped) {
        const body = mode === 'whole' ? { folderPath: o.folder } : { folderPath: o.folder, names: o.screen }
        const res = await ocs(o.auth, 'get-folder-states', body, etag ? { 'if-none-match': etag } : {})
        bytes += res.bytes
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (mode === 'screen') etag = res.etag
        // A refusal (429, or 400 from a bridge without paging) or a cut connection is not retried at once.
        if (res.status >= 400 || res.status === 0) await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
    const pollers = Array.from({ length: o.pollers }, poller)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const ms = await metadata(new Promise((resolve) => setTimeout(resolve, o.seconds * 1000)), 20)
    stopped = true
    await Promise.all(pollers)
    const seconds = (performance.now() - started) / 1000
    const count = [...statuses.values()].reduce((a, b) => a + b, 0)
    const answered = [...statuses.entries()].map(([s, n]) => `${n}× ${s}`).join(', ')
    return {
      ms,
      line: `${(count / seconds).toFixed(0)} req/s (${answered}), ${(bytes / count / 1024).toFixed(1)} KB a request on the wire`,
    }
  }
  for (const mode of ['whole', 'screen'] as const) {
    const run = await poll(mode)
    const what = mode === 'whole' ? `whole folder, unconditional` : `${o.screen.length} names + If-None-Match`
    console.log(`  ${o.pollers} pollers (${what}): ${run.line}`)
    console.log(`    other user's metadata meanwhile  : ${figures(run.ms)} (target p50 < 50 ms)`)
  }
}
