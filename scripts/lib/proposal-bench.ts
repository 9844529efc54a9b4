import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectToNetwork } from '../../server/gateway/deals/market/network-access.ts'
import { createSimnet, simulatedCollateralBounds } from '../../server/simulation/simnet/index.ts'
import { startSimulatedNetwork } from '../../server/simulation/simnet/on-loopback.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'

export interface ProposalFigures {
  label: string
  perSecond: number
  cpuMsPerProposal: number
}

/**
 * Proposals per second and CPU per proposal, before and after deals went on
 * the wire: a simulated provider called in-process (how deals were made
 * before), then the same provider over libp2p (sign, CBOR, noise and yamux,
 * signature check on the provider's side), one at a time and 16 at once.
 * Both sides run in this process, so the CPU is the client's and the
 * provider's together. Each provider's CAR fetch fails at once (404), so only
 * the proposal is measured.
 */
export async function benchProposals(count: number): Promise<ProposalFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-proposals-'))
  const simnet = createSimnet({ seed: 'bench-proposals' })
  // Composed as npm start composes it: the client finds the providers over the chain's JSON-RPC.
  const network = await startSimulatedNetwork({ simnet, dir, seed: 'bench-proposals' })
  const { providers, hosts } = network
  const nothing = createServer((_req, res) => res.writeHead(404).end())
  await new Promise<void>((r) => nothing.listen(0, '127.0.0.1', r))
  const signer = createSigner(newPrivateKey(), 'mainnet')
  const access = await connectToNetwork({ rpcUrl: network.rpcUrl, clock: simnet.clock, signer, network: 'mainnet' })
  const client = access.client
  try {
    let provider = ''
    let pieceSize = 0
    for (const id of hosts.endpoints.keys()) {
      const t = (await simnet.providerTerms(id))!
      // A Boost-like provider taking price 0: Curio-like ones insist the piece size fit the 100-byte transfer, and the bench proposes at price 0.
      if (!provider && t.transferTypes.includes('http') && hosts.endpoints.get(id)?.kind === 'boost' && t.verifiedPrice === '0')
        [provider, pieceSize] = [id, t.minPieceSize]
    }
    const head = simnet.headEpoch()
    const proposal: DealProposal = {
      PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' },
      PieceSize: pieceSize,
      VerifiedDeal: true,
      Client: signer.address,
      Provider: provider,
      Label: 'bench',
      StartEpoch: head + 10_000,
      EndEpoch: head + 10_000 + 518_400,
      StoragePricePerEpoch: '0',
      ProviderCollateral: simulatedCollateralBounds(pieceSize, true).min.toString(),
      ClientCollateral: '0',
    }
    const transfer = { url: `http://127.0.0.1:${(nothing.address() as AddressInfo).port}/car`, headers: {}, size: 100, clientId: 'bench' }
    const measure = async (label: string, concurrency: number, one: () => Promise<{ accepted: boolean }>): Promise<ProposalFigures> => {
      await one() // warm-up: connection, JIT
      const cpu = process.cpuUsage()
      const started = performance.now()
      let next = 0
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < count) if (!(await one()).accepted) throw new Error('a bench proposal was refused')
        }),
      )
      const seconds = (performance.now() - started) / 1000
      const used = process.cpuUsage(cpu)
      return { label, perSecond: count / seconds, cpuMsPerProposal: (used.user + used.system) / 1000 / count }
    }
    const overWire = () =>
      client.propose(
        { dealUuid: randomUUID(), proposal, dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false },
        AbortSignal.timeout(30_000),
      )
    return [
      await measure('before: in-process call', 1, () => providers.propose(proposal, transfer)),
      await measure('after: libp2p, 1 at a time', 1, overWire),
      await measure('after: libp2p, 16 at once', 16, overWire),
    ]
  } finally {
    await access.close()
    await network.close()
    await new Promise((r) => nothing.close(r))
    rmSync(dir, { recursive: true, force: true })
  }
}
