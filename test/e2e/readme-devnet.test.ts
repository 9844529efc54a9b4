/**
 * The README's Onchain Cloud devnet walk-through, run as a newcomer runs it
 * (issue 44): one stack plays the devnet, as `npm start` in `./data`; its
 * marked block is then pasted into bash line by line, the address `wallet
 * new` printed put where the README says `0x…`, and its last line, `npm
 * start`, starts a second stack with what the block exported. That second
 * stack, with no Lotus node, stores a file as a proved PDP copy on the first
 * one's simulated Onchain Cloud. Only the folders and ports differ from the
 * README's (tests use temporary folders and free ports).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const MARKER = '<!-- checked by test/e2e/readme-devnet.test.ts -->'
const urlOf = (output: string, msg: string) => new RegExp(`"url":"(http:[^"]+)"[^\\n]*${msg}`).exec(output)?.[1]

/** The marked block's lines, continuations joined. */
function walkThrough(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf(MARKER)
  if (at < 0) throw new Error(`README has no block marked ${MARKER}`)
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))![1]!
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '')
}

describe("README: an Onchain Cloud devnet, a second gateway funded by the first stack's faucet", () => {
  const devnetDir = mkdtempSync(join(tmpdir(), 'readme-devnet-'))
  const secondDir = mkdtempSync(join(tmpdir(), 'readme-devnet-2-'))
  let devnet: RunningStack | undefined
  let second: RunningStack | undefined
  afterAll(async () => {
    if (second?.child.exitCode === null) await second.stop()
    if (devnet?.child.exitCode === null) await devnet.stop()
    rmSync(devnetDir, { recursive: true, force: true })
    rmSync(secondDir, { recursive: true, force: true })
  })

  it('works as written: wallet new, the faucet, npm start, and a file gets a proved PDP copy', async () => {
    devnet = await startStack({ DATA_DIR: devnetDir, SIMFOC_PROVIDERS: '2' })
    const focUrl = urlOf(devnet.output(), 'simulated Onchain Cloud')!
    const lines = walkThrough()
    // The README's folders and ports, as this test has them.
    const here = (line: string) =>
      line
        .replaceAll('./data-2', secondDir)
        .replaceAll('./data', devnetDir)
        .replaceAll('http://127.0.0.1:1235/rpc/v1', focUrl)
        .replace(/\bPORT=8081\b/, 'PORT=0')
        .replace(/\bGATEWAY_PORT=9012\b/, 'GATEWAY_PORT=0')
    expect(lines.at(-1)).toBe('npm start')
    const exported = lines.filter((line) => line.startsWith('export '))
    const commands = lines.slice(exported.length, -1)
    expect(commands.map((c) => c.replace(/\s+#.*$/, ''))).toEqual([
      'npm run wallet -- new',
      'DATA_DIR=./data npm run simfoc -- fund 0x… 100 1000',
    ])

    // The faucet finds the first stack's simulated Onchain Cloud where npm start puts it (127.0.0.1:1235); here, elsewhere.
    const bash = (command: string) =>
      execFileSync('bash', ['-e', '-o', 'pipefail', '-c', [...exported, command].map(here).join('\n')], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, SIMFOC_RPC_URL: focUrl },
      })
    const key = bash(commands[0]!)
    const address = /0x[0-9a-fA-F]{40}/.exec(key)?.[0]
    expect(address, key).toBeDefined()
    expect(bash(commands[1]!.replace('0x…', address!))).toContain(`Sent 100 FIL and minted 1000 USDFC to ${address}`)

    // `npm start` with what the block exported.
    const env = Object.fromEntries(
      [...here(exported.join(' ')).matchAll(/\b([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1]!, m[2]!] as [string, string]),
    )
    second = await startStack(env)
    const s = second
    expect(s.serviceUrl).toBeUndefined()
    const auth = basicAuth('admin', 'demo-password')
    const put = await fetch(`${s.appUrl}/remote.php/dav/files/admin/devnet.txt`, {
      method: 'PUT',
      headers: { authorization: auth },
      body: 'a devnet',
    })
    expect(put.status).toBe(201)
    let proved: any
    for (const started = Date.now(); !proved && Date.now() - started < 300_000; await new Promise((r) => setTimeout(r, 1000))) {
      const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/devnet.txt' }),
      })
      const groups = ((await res.json()) as any).metadata?.file?.details?.groups ?? []
      proved = groups.flatMap((g: any) => g.deals ?? []).find((d: any) => d.route === 'pdp' && d.milestone === 'proved')
    }
    expect(proved).toMatchObject({ provider: expect.stringMatching(/^pdp:\d+$/), state: 'active' })
    expect(await s.stop()).toBe(0)
  }, 600_000)
})
