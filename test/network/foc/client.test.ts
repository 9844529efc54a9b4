import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as Piece from '@filoz/synapse-core/piece'
import { parseEther, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { focClientOn } from '../../simulation/simfoc/sdk-chain.ts'
import { FocFundsError, type FocClient, type FocCopy, type FocStored } from '../../../server/network/foc/client.ts'
import { NetworkError } from '../../../server/network/errors.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'
import { until } from '../../helpers/until.ts'
import { recordingFetches } from '../../helpers/recording-fetch.ts'

/** The longest a proof or a missed period is waited for. */
const UNTIL_MS = 240_000

const USDFC = (n: string) => parseUnits(n, 18)

describe("the gateway's Onchain Cloud client (the unchanged Synapse SDK) against the simulated FOC on loopback", () => {
  let dir: string
  let foc: SimulatedFoc
  let client: FocClient
  let stored: FocStored
  const account = privateKeyToAccount(generatePrivateKey())
  const data = new Uint8Array(200_000).map((_, i) => (i * 7919) % 251)
  const providerOf = (providerId: number) => foc.providers.find((p) => Number(p.providerId) === providerId)!

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'foc-client-'))
    // 40 epochs a second: a proving period (240 epochs) is 6 s, its challenge window (120 epochs) 3 s.
    foc = await startSimulatedFoc({
      dir,
      seed: 'client test',
      genesisTimestamp: Date.now() / 1000,
      epochSeconds: 0.025,
      providerCount: 3,
      proving: 'wide-window',
    })
    await foc.faucet(account.address, { fil: parseEther('10'), usdfc: USDFC('100') })
    client = await focClientOn(foc, account)
  }, 180_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('says what a first upload needs before any deposit, and is ready once funded', async () => {
    const before = await client.funding(1_000_000)
    expect(before.ready).toBe(false)
    expect(before.needsApproval).toBe(true)
    expect(before.depositNeeded).toBeGreaterThan(0n)
    await client.fund(before.depositNeeded + USDFC('5'))
    expect((await client.funding(1_000_000)).ready).toBe(true)
    // A second deposit, once the service is approved, takes the allowance path (the SDK's permit path fails on devnets).
    await client.fund(USDFC('1'))
    const account_ = await client.account()
    expect(account_.funds).toBe(before.depositNeeded + USDFC('6'))
    expect(account_.walletUsdfc).toBe(USDFC('100') - account_.funds)
  })

  it('stores a piece on two providers, every request on loopback, and each copy gets a proof on chain', async () => {
    const adds = new Map<number, `0x${string}`>()
    const { result, urls } = await recordingFetches(() =>
      client.store(data, { copies: 2, onProgress: (e) => e.kind === 'adding' && adds.set(e.providerId, e.txHash) }),
    )
    stored = result
    expect(stored.pieceCid).toBe(Piece.calculate(data).toString())
    expect(stored.copies).toHaveLength(2)
    expect(new Set(stored.copies.map((c) => c.providerId)).size).toBe(2)
    // The SDK spoke to the chain and to the providers, and to nothing else.
    expect(urls.length).toBeGreaterThan(10)
    expect(new Set(urls.map((u) => u.hostname))).toEqual(new Set(['127.0.0.1']))
    const ports = new Set(urls.map((u) => u.port))
    expect(ports).toContain(new URL(foc.rpcUrl).port)
    for (const copy of stored.copies) expect(ports).toContain(new URL(providerOf(copy.providerId).url).port)

    for (const copy of stored.copies) {
      const proof = await until(
        async () => {
          const p = await client.copyProof(copy)
          return p.proved ? p : undefined
        },
        `a proof of data set ${copy.dataSetId}`,
        UNTIL_MS,
      )
      expect(proof.dataSetLive).toBe(true)
      expect(proof.lastProvenEpoch).toBeGreaterThan(copy.addedEpoch)
      expect(proof.maxProvingPeriod).toBe(240)
      const provider = providerOf(copy.providerId)
      expect(provider.provider.proofs().some((p) => BigInt(p.dataSetId) === copy.dataSetId)).toBe(true)
      // The copy is there to read back, byte for byte.
      const back = await Piece.downloadAndValidate({ url: copy.retrievalUrl, expectedPieceCid: Piece.parse(stored.pieceCid) })
      expect(back).toEqual(data)
    }
    const after = await client.account()
    expect(after.lockupRatePerEpoch).toBeGreaterThan(0n)
    expect(after.runwayEpochs).toBeGreaterThan(0n)

    // Each add transaction, read back as a restarted gateway would: the same copy as the SDK's answer.
    const v2 = stored.pieceCid
    for (const copy of stored.copies) {
      expect(await client.addedCopy({ txHash: adds.get(copy.providerId)!, providerId: copy.providerId, pieceCid: v2 })).toEqual({
        status: 'added',
        copy,
      })
    }
    // Found by the piece CID alone, on both providers, as a gateway that lost the adds' answers finds them.
    const byProvider = (copies: FocCopy[]) => copies.map(({ addedEpoch: _, ...c }) => c).sort((a, b) => a.providerId - b.providerId)
    const found = await client.pieceCopies({ pieceCid: v2 })
    expect(byProvider(found)).toEqual(byProvider(stored.copies))
    for (const c of found) expect(c.addedEpoch).toBeGreaterThanOrEqual(stored.copies.find((x) => x.providerId === c.providerId)!.addedEpoch)
    // A transaction not in any block yet, and one that added nothing of ours (a deposit).
    expect(await client.addedCopy({ txHash: `0x${'ab'.repeat(32)}`, providerId: stored.copies[0].providerId, pieceCid: v2 })).toEqual({
      status: 'pending',
    })
    const deposit = await client.fund(USDFC('1'))
    expect(await client.addedCopy({ txHash: deposit, providerId: stored.copies[0].providerId, pieceCid: v2 })).toEqual({ status: 'failed' })
  }, 300_000)

  it('sees a provider that stops proving: its copy misses proving periods while the other goes on', async () => {
    const [failing, healthy] = stored.copies
    await providerOf(failing.providerId).provider.setFault('stop-proving')
    try {
      const missed = await until(
        async () => {
          const p = await client.copyProof(failing)
          return p.missedPeriods >= 2 ? p : undefined
        },
        'two missed proving periods',
        UNTIL_MS,
      )
      expect(missed.dataSetLive).toBe(true)
      // The first missed period follows the one of the last proof: its deadline is a proving period or more after that proof.
      expect(missed.firstMissedDeadline! - missed.maxProvingPeriod).toBeGreaterThanOrEqual(missed.lastProvenEpoch)
      expect(await client.copyProof(healthy)).toMatchObject({ missedPeriods: 0, firstMissedDeadline: null })
    } finally {
      await providerOf(failing.providerId).provider.setFault(null)
    }
  }, 300_000)

  it('sees a provider that lost the piece: it no longer serves it, and its proofs stop', async () => {
    const copy = stored.copies[1]
    await providerOf(copy.providerId).provider.setFault('lose')
    expect((await fetch(copy.retrievalUrl)).status).toBe(404)
    const missed = await until(
      async () => {
        const p = await client.copyProof(copy)
        return p.missedPeriods >= 1 ? p : undefined
      },
      'a missed proving period after the loss',
      UNTIL_MS,
    )
    expect(missed.proved).toBe(true) // it was proved before; what changed is that the latest periods were not
  }, 300_000)

  it('with an empty wallet, says what is missing and refuses to deposit what it does not hold', async () => {
    const empty = await focClientOn(foc, privateKeyToAccount(generatePrivateKey()))
    const funding = await empty.funding(1_000_000)
    expect(funding.ready).toBe(false)
    expect(funding.depositNeeded).toBeGreaterThan(0n)
    const refused = await empty.fund(funding.depositNeeded).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(FocFundsError)
    expect((refused as Error).message).toMatch(/holds 0 USDFC/)
  })

  it('gives up a stalled upload when its time is out, with a timeout the engine can tell apart', async () => {
    for (const p of foc.providers) await p.provider.setFault('stall')
    try {
      const failure = await client
        .store(new Uint8Array(50_000).fill(9), { copies: 1, signal: AbortSignal.timeout(3_000) })
        .catch((e: unknown) => e)
      expect(failure).toBeInstanceOf(NetworkError)
      expect((failure as NetworkError).code).toBe('TIMED_OUT')
    } finally {
      for (const p of foc.providers) await p.provider.setFault(null)
    }
    expect(foc.providers.every((p) => p.provider.stalledUploads() === 0)).toBe(true)
  }, 60_000)
})
