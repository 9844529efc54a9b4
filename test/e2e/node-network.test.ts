import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { networkNameMismatch } from '../../server/network/lotus/network-name.ts'
import { runGatewayRole } from '../helpers/gateway-role.ts'

/**
 * NETWORK is checked against the node at start: a gateway pointed at a node
 * of another network stops with a message naming both, before it signs
 * anything. The "node" is a few lines answering StateGetNetworkParams with the
 * name a test gives it, as Lotus does (NetworkName from StateNetworkName), and
 * on a devnet its miners with the addresses a test gives them.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'node-network-'))
let reported = 'calibrationnet'
/** The devnet's miners and the addresses their miner info publishes. */
let miners: Record<string, string[]> = {}
const GENESIS = Math.floor(Date.now() / 1000) - 3600

/** What the node answers, as Lotus does (api/types.go NetworkParams, MinerInfo with base64 multiaddr bytes). */
function answer(method: string, params: unknown[]): unknown {
  switch (method) {
    case 'Filecoin.StateGetNetworkParams':
      return { NetworkName: reported, BlockDelaySecs: 4 }
    case 'Filecoin.ChainHead':
      return { Height: 900, Blocks: [{ Timestamp: GENESIS + 900 * 4 }] }
    case 'Filecoin.StateListMiners':
      return Object.keys(miners)
    case 'Filecoin.StateLookupID':
      return params[0]
    case 'Filecoin.StateMinerInfo': {
      const id = params[0] as string
      const peerId = '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7'
      const addrs = (miners[id] ?? []).map((a) => Buffer.from(multiaddr(a).bytes).toString('base64'))
      return { Owner: id, Worker: id, PeerId: peerId, Multiaddrs: addrs, SectorSize: 8 << 20 }
    }
    default:
      return null
  }
}
let node: Server
let nodeUrl = ''

beforeAll(async () => {
  node = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] }
      const result = answer(call.method, call.params)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }))
    })
  })
  await new Promise<void>((r) => node.listen(0, '127.0.0.1', r))
  nodeUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}/rpc/v1`
})
afterAll(async () => {
  await new Promise((r) => node.close(r))
  rmSync(dataDir, { recursive: true, force: true })
})

/** The gateway on the test node, with a deal service it never reaches and a public transfer URL unless `env` says otherwise. */
const startGateway = (env: Record<string, string>) =>
  runGatewayRole({
    DATA_DIR: dataDir,
    SERVICE_URL: 'http://127.0.0.1:9',
    SERVICE_API_KEY: 'fgs_test-key-0000000000000000',
    GATEWAY_PUBLIC_URL: 'https://gateway.example.org',
    LOTUS_URL: nodeUrl,
    ...env,
  })

describe("the node's network name against NETWORK", () => {
  it('takes only the public networks’ own names for them, and any other name for a devnet', () => {
    expect(networkNameMismatch('mainnet', 'mainnet', 'u')).toBeNull()
    expect(networkNameMismatch('calibration', 'calibrationnet', 'u')).toBeNull()
    expect(networkNameMismatch('devnet', 'localnet-2a7c', 'u')).toBeNull()
    expect(networkNameMismatch('mainnet', 'calibrationnet', 'u')).toMatch(/set NETWORK=calibration/)
    expect(networkNameMismatch('calibration', 'localnet-2a7c', 'u')).toMatch(/set NETWORK=devnet/)
    expect(networkNameMismatch('devnet', 'mainnet', 'u')).toMatch(/the node at u is on mainnet/)
  })

  it('stops a calibration gateway whose node is a devnet, naming both', async () => {
    reported = 'localnet-2a7c'
    const { out, code } = await startGateway({ NETWORK: 'calibration' })
    expect(code).toBe(1)
    expect(out).toContain(`NETWORK: calibration, but the node at ${nodeUrl} reports network name "localnet-2a7c"`)
    expect(out).not.toContain('gateway listening')
  }, 70_000)

  it('stops a devnet gateway whose node is mainnet, before any key is made', async () => {
    reported = 'mainnet'
    const { out, code } = await startGateway({ NETWORK: 'devnet' })
    expect(code).toBe(1)
    expect(out).toMatch(/NETWORK: devnet, but the node at .* is on mainnet/)
  }, 70_000)

  it('starts when the node is on the network NETWORK names', async () => {
    reported = 'calibrationnet'
    const { out } = await startGateway({ NETWORK: 'calibration' })
    expect(out).toContain('gateway listening')
    expect(out).toContain('the node is on NETWORK=calibration')
  }, 70_000)
})

describe("a devnet's transfer URL", () => {
  it("turns deals off when it is loopback while a provider listens at a docker devnet's name, and says what to set", async () => {
    reported = 'localnet-2a7c'
    miners = { t01000: ['/dns/boost/tcp/50000'] }
    const { out } = await startGateway({ NETWORK: 'devnet', GATEWAY_PUBLIC_URL: 'http://127.0.0.1:9011' })
    expect(out).toContain('gateway listening')
    expect(out).toContain(
      "deals are off: the transfer URL http://127.0.0.1:9011 is this machine's loopback, but provider t01000 listens at /dns/boost/tcp/50000",
    )
    expect(out).toMatch(/"deals":false/)
  }, 70_000)

  it('keeps deals on when the providers are on this machine too', async () => {
    reported = 'localnet-2a7c'
    miners = { t01000: ['/dns4/localhost/tcp/50000'] }
    const { out } = await startGateway({ NETWORK: 'devnet', GATEWAY_PUBLIC_URL: 'http://127.0.0.1:9011' })
    expect(out).not.toContain('deals are off')
    expect(out).toMatch(/"deals":true/)
  }, 70_000)
})
