import autocannon from 'autocannon'
import { percentile } from './percentile.ts'
import { cpuSeconds } from './proc.ts'

/**
 * Folder records for folders of 10, 1 000 and 100 000 files below them: the
 * gateway's CPU per record, and what 50 clients polling the biggest folder
 * do to an unrelated file's record. The big folders are made by WebDAV COPY
 * of a 1 000-file folder (one request per 1 000 files), since 100 000 PUTs
 * would take minutes of the benchmark's time for nothing it measures.
 */
export async function benchFolderRecords(o: {
  gatewayUrl: string
  gatewayPid: number | undefined
  auth: string
  sizes: number[]
}): Promise<void> {
  const dav = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${o.gatewayUrl}${path}`, { ...init, headers: { authorization: o.auth, ...init.headers } })
  const ok = async (res: Promise<Response>, what: string) => {
    const r = await res
    await r.arrayBuffer()
    if (r.status >= 300) throw new Error(`${what} answered ${r.status}`)
  }
  const root = '/folder-bench'
  await ok(dav(root, { method: 'MKCOL' }), 'MKCOL')
  // A 1 000-file folder (or smaller ones) by PUTs, 20 at a time; bigger ones as copies of it.
  const unit = Math.min(1_000, Math.max(...o.sizes))
  await ok(dav(`${root}/unit`, { method: 'MKCOL' }), 'MKCOL')
  for (let i = 0; i < unit; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, unit - i) }, (_, j) =>
        ok(dav(`${root}/unit/f-${i + j}.txt`, { method: 'PUT', body: `file ${i + j}\n` }), 'PUT'),
      ),
    )
  }
  await ok(dav(`${root}/other.txt`, { method: 'PUT', body: 'unrelated\n' }), 'PUT')
  const folders: { files: number; path: string }[] = []
  for (const files of o.sizes) {
    const path = `${root}/f${files}`
    if (files <= unit) {
      await ok(dav(path, { method: 'MKCOL' }), 'MKCOL')
      for (let i = 0; i < files; i += 20) {
        await Promise.all(
          Array.from({ length: Math.min(20, files - i) }, (_, j) =>
            ok(dav(`${path}/f-${i + j}.txt`, { method: 'PUT', body: `file ${i + j}\n` }), 'PUT'),
          ),
        )
      }
    } else {
      await ok(dav(path, { method: 'MKCOL' }), 'MKCOL')
      for (let c = 0; c < Math.ceil(files / unit); c++) {
        await ok(
          dav(`${root}/unit`, { method: 'COPY', headers: { destination: `${o.gatewayUrl}${path}/c-${c}`, depth: 'infinity' } }),
          'COPY',
        )
      }
    }
    folders.push({ files, path })
  }

  const record = async (filePath: string) => {
    const res = await fetch(`${o.gatewayUrl}/file-info`, {
      method: 'POST',
      headers: { authorization: o.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ filePath, verbose: true }),
    })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`record of ${filePath} answered ${res.status}`)
    return Object.assign(JSON.parse(text) as { result?: { file: { details?: { fileCounts?: Record<string, number> } } } }, {
      bytes: text.length,
    })
  }
  console.log('\nfolder records (POST /file-info, verbose) by files below the folder')
  for (const f of folders) {
    const t0 = performance.now()
    const cpu0 = cpuSeconds(o.gatewayPid)
    const first = await record(f.path)
    const firstMs = performance.now() - t0
    const firstCpu = (cpuSeconds(o.gatewayPid) - cpu0) * 1000
    const counted = Object.values(first.result?.file.details?.fileCounts ?? {}).reduce((a, b) => a + b, 0)
    const runs = 50
    const cpu1 = cpuSeconds(o.gatewayPid)
    const t1 = performance.now()
    for (let i = 0; i < runs; i++) await record(f.path)
    const each = (performance.now() - t1) / runs
    const cpuEach = ((cpuSeconds(o.gatewayPid) - cpu1) * 1000) / runs
    console.log(
      `  ${String(f.files).padStart(6)} files (${counted} counted): ${first.bytes} bytes; first record ${firstMs.toFixed(0)} ms (${firstCpu.toFixed(0)} ms gateway CPU, after the change); then ${each.toFixed(2)} ms, ${cpuEach.toFixed(2)} ms gateway CPU per record`,
    )
  }

  const biggest = folders[folders.length - 1]
  const polling = autocannon({
    url: `${o.gatewayUrl}/file-info`,
    method: 'POST',
    connections: 50,
    duration: 10,
    headers: { authorization: o.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ filePath: biggest.path, verbose: true }),
  })
  const latencies: number[] = []
  const until = performance.now() + 9_000
  await new Promise((resolve) => setTimeout(resolve, 500))
  while (performance.now() < until) {
    const t0 = performance.now()
    await record(`${root}/other.txt`)
    latencies.push(performance.now() - t0)
  }
  const polled = await polling
  const p = (q: number) => percentile(latencies, q).toFixed(1)
  console.log(
    `  50 clients polling the ${biggest.files}-file folder: ${polled.requests.average.toFixed(0)} records/s, p99 ${polled.latency.p99} ms`,
  )
  console.log(
    `  meanwhile an unrelated file's record: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms over ${latencies.length} requests (target p99 < 50 ms)`,
  )
}
