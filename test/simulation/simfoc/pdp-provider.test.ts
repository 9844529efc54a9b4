import { devnet } from '@filoz/synapse-core/chains'
import * as Piece from '@filoz/synapse-core/piece'
import * as SP from '@filoz/synapse-core/sp'
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CarReader, CarWriter } from '@ipld/car'
import * as dagPb from '@ipld/dag-pb'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import * as Digest from 'multiformats/hashes/digest'
import { createWalletClient, http, type Address } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { capabilitiesListToObject, decodePDPCapabilities } from '@filoz/synapse-core/utils'
import type { FaultPlan } from '../../../server/simulation/simnet/faults.ts'
import { offeringCapabilities } from '../../../server/simulation/simfoc/pdp-provider-chain.ts'
import { createPdpProvider, type PdpProvider } from '../../../server/simulation/simfoc/pdp-provider.ts'
import { CLEANUP_DEPOSIT, FakePdpChain } from './pdp-provider-fake-chain.ts'

/**
 * The simulated Curio's HTTP surface, driven by the Synapse SDK's own
 * functions (synapse-core sp/* and piece/*) over loopback, against a
 * recording chain port.
 */

const FWSS: Address = '0x00000000000000000000000000000000000f1055'
const chainForSdk = { ...devnet, contracts: { ...devnet.contracts, fwss: { ...devnet.contracts.fwss, address: FWSS } } }
const client = createWalletClient({
  account: privateKeyToAccount('0x1111111111111111111111111111111111111111111111111111111111111111'),
  chain: chainForSdk,
  transport: http('http://127.0.0.1:9/unused'),
})

/** Deterministic bytes: a SHA-256 counter stream. */
function bytes(size: number, seed: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size)
  for (let i = 0, n = 0; i < size; n++) {
    const block = createHash('sha256').update(`${seed}/${n}`).digest()
    out.set(block.subarray(0, Math.min(32, size - i)), i)
    i += 32
  }
  return out
}

let dir: string
let chain: FakePdpChain
let provider: PdpProvider
let url: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdp-provider-'))
  chain = new FakePdpChain()
  provider = await createPdpProvider({ dir, chain, recordKeepers: [FWSS], pollMs: 0 })
  url = await provider.listen()
})

afterEach(async () => {
  await provider.close()
  await rm(dir, { recursive: true, force: true })
})

/** Mines blocks and lets the provider react to each new head. */
async function advance(blocks = 1): Promise<void> {
  for (let i = 0; i < blocks; i++) {
    chain.advance()
    await provider.tick()
  }
}

describe('simulated Curio: ping and uploads through the SDK', () => {
  it('answers ping with Curio’s body', async () => {
    await expect(SP.ping(url)).resolves.toBeDefined()
    const res = await fetch(`${url}/pdp/ping`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('curio-pdp')
  })

  it('takes a streaming upload, computes its CommP itself, and finds the piece', async () => {
    const data = bytes(100_000, 'stream')
    const uploaded = await SP.uploadPieceStreaming({ serviceURL: url, data })
    expect(uploaded.size).toBe(data.length)
    expect(uploaded.pieceCid.toString()).toBe(Piece.calculate(data).toString())
    const found = await SP.findPiece({ serviceURL: url, pieceCid: uploaded.pieceCid })
    expect(found.toString()).toBe(uploaded.pieceCid.toString())
  })

  it('takes a streaming upload given as a ReadableStream of several chunks', async () => {
    const data = bytes(3 * 1024 * 1024 + 17, 'chunks')
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < data.length; i += 65_536) controller.enqueue(data.slice(i, i + 65_536))
        controller.close()
      },
    })
    const uploaded = await SP.uploadPieceStreaming({ serviceURL: url, data: stream, size: data.length })
    expect(uploaded.pieceCid.toString()).toBe(Piece.calculate(data).toString())
    await expect(SP.findPiece({ serviceURL: url, pieceCid: uploaded.pieceCid })).resolves.toBeDefined()
  })

  it('takes the older upload (POST /pdp/piece, PUT /pdp/piece/upload/{id}) and answers 200 for a piece it already has', async () => {
    const data = bytes(5000, 'older')
    const pieceCid = Piece.calculate(data)
    await SP.uploadPiece({ serviceURL: url, data, pieceCid })
    await expect(SP.findPiece({ serviceURL: url, pieceCid })).resolves.toBeDefined()
    const again = await fetch(`${url}/pdp/piece`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pieceCid: pieceCid.toString() }),
    })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual({ pieceCid: pieceCid.toString() })
  })

  it('refuses a finalize whose piece CID is not the CommP of what it received', async () => {
    const data = bytes(4096, 'mine')
    const other = Piece.calculate(bytes(4096, 'other'))
    const err = await SP.uploadPieceStreaming({ serviceURL: url, data, pieceCid: other }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toContain(
      'Failed to finalize upload: Invalid request body: pieceCid does not match the calculated pieceCid for the uploaded piece [eid: ',
    )
    await expect(SP.findPiece({ serviceURL: url, pieceCid: other })).rejects.toThrow()
  })

  it('refuses a finalize whose piece CID names another size', async () => {
    const data = bytes(4096, 'sized')
    const longer = Piece.calculate(bytes(4097, 'sized'))
    await expect(SP.uploadPieceStreaming({ serviceURL: url, data, pieceCid: longer })).rejects.toThrow(
      'pieceCid size does not match uploaded piece size',
    )
  })

  it('refuses the older upload when the bytes are not the declared piece', async () => {
    const declared = Piece.calculate(bytes(2000, 'declared'))
    const post = await fetch(`${url}/pdp/piece`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pieceCid: declared.toString() }),
    })
    expect(post.status).toBe(201)
    const location = post.headers.get('location')!
    expect(location).toMatch(/^\/pdp\/piece\/upload\/[0-9a-f-]{36}$/)
    const put = await fetch(`${url}${location}`, { method: 'PUT', body: bytes(2000, 'different') })
    expect(put.status).toBe(400)
    expect(await put.text()).toMatch(/^Computed hash does not match expected hash \[eid: [0-9a-f-]{36}\]\n$/)
  })

  it('keeps Curio’s size limits: 127 bytes at least', async () => {
    const create = await fetch(`${url}/pdp/piece/uploads`, { method: 'POST' })
    expect(create.status).toBe(201)
    const location = create.headers.get('location')!
    expect(location).toMatch(/^\/pdp\/piece\/uploads\/[0-9a-f-]{36}$/)
    const put = await fetch(`${url}${location}`, { method: 'PUT', body: new Uint8Array(126) })
    expect(put.status).toBe(400)
    expect(await put.text()).toContain('piece data is below the minimum allowed size (127 bytes)')
    const exact = await fetch(`${url}${location}`, { method: 'PUT', body: new Uint8Array(127).fill(7) })
    expect(exact.status).toBe(204)
  })

  it('answers Curio’s errors for unknown uploads, bad CIDs and unknown routes', async () => {
    const missing = await fetch(`${url}/pdp/piece/uploads/00000000-0000-0000-0000-000000000000`, {
      method: 'PUT',
      body: new Uint8Array(200),
    })
    expect(missing.status).toBe(404)
    expect(await missing.text()).toBe('404 page not found\n')
    const badUuid = await fetch(`${url}/pdp/piece/uploads/not-a-uuid`, { method: 'PUT', body: new Uint8Array(200) })
    expect(badUuid.status).toBe(400)
    expect(await badUuid.text()).toContain('Invalid upload UUID [eid: ')
    const badCid = await fetch(`${url}/pdp/piece?pieceCid=bafy-nope`)
    expect(badCid.status).toBe(400)
    expect(await badCid.text()).toContain('Failed to parse CID: invalid CID')
    // A PieceCIDv1 (fil-commitment-unsealed, sha2-256-trunc254-padded) has no size: Curio wants v2 here.
    const v2 = Piece.calculate(bytes(300, 'v1'))
    const v1 = CID.create(1, 0xf101, Digest.create(0x1012, v2.multihash.digest.slice(-32)))
    const v1Only = await fetch(`${url}/pdp/piece?pieceCid=${v1}`)
    expect(v1Only.status).toBe(400)
    expect(await v1Only.text()).toContain('piece CID must be PieceCIDv2 format (got multihash type 4114)')
    const unknown = await fetch(`${url}/pdp/nothing`)
    expect(unknown.status).toBe(404)
    const wrongMethod = await fetch(`${url}/pdp/ping`, { method: 'POST' })
    expect(wrongMethod.status).toBe(405)
  })
})

describe('simulated Curio: retrieval', () => {
  it('serves a piece whole and by Range, and the SDK’s download validates it', async () => {
    const data = bytes(70_000, 'range')
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data })
    const pieceUrl = `${url}/piece/${pieceCid}`
    const whole = await Piece.downloadAndValidate({ url: pieceUrl, expectedPieceCid: pieceCid })
    expect(Buffer.from(whole).equals(Buffer.from(data))).toBe(true)

    const part = await fetch(pieceUrl, { headers: { Range: 'bytes=1000-1999' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${data.length}`)
    expect(part.headers.get('content-length')).toBe('1000')
    expect(part.headers.get('etag')).toBe(`"${pieceCid}"`)
    expect(part.headers.get('cache-control')).toBe('public, max-age=29030400, immutable')
    expect(Buffer.from(await part.arrayBuffer()).equals(Buffer.from(data.subarray(1000, 2000)))).toBe(true)

    const tail = await fetch(pieceUrl, { headers: { Range: 'bytes=-10' } })
    expect(tail.status).toBe(206)
    expect(Buffer.from(await tail.arrayBuffer()).equals(Buffer.from(data.subarray(data.length - 10)))).toBe(true)

    const outside = await fetch(pieceUrl, { headers: { Range: `bytes=${data.length}-` } })
    expect(outside.status).toBe(416)
    expect(outside.headers.get('content-range')).toBe(`bytes */${data.length}`)

    const head = await fetch(pieceUrl, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(data.length))
  })

  it('answers 404 for a piece it does not have', async () => {
    const res = await fetch(`${url}/piece/${Piece.calculate(bytes(500, 'absent'))}`)
    expect(res.status).toBe(404)
  })
})

/** A small DAG (a dag-pb node over two raw leaves) as a CARv1. */
async function smallDag(): Promise<{
  car: Uint8Array<ArrayBuffer>
  root: CID
  leaves: { cid: CID; bytes: Uint8Array }[]
  rootBytes: Uint8Array
}> {
  const leaves = []
  for (const text of ['first leaf of the dag', 'second leaf of the dag']) {
    const bytes = new TextEncoder().encode(text.repeat(20))
    leaves.push({ cid: CID.create(1, raw.code, await sha256.digest(bytes)), bytes })
  }
  const rootBytes = dagPb.encode(
    dagPb.prepare({
      Data: new Uint8Array([8, 2]),
      Links: leaves.map((l, i) => ({ Hash: l.cid, Name: `part${i}`, Tsize: l.bytes.length })),
    }),
  )
  const root = CID.create(1, dagPb.code, await sha256.digest(rootBytes))
  const { writer, out } = CarWriter.create([root])
  const chunks: Uint8Array[] = []
  const collected = (async () => {
    for await (const chunk of out) chunks.push(chunk)
  })()
  await writer.put({ cid: root, bytes: rootBytes })
  for (const leaf of leaves) await writer.put(leaf)
  await writer.close()
  await collected
  const car = new Uint8Array(Buffer.concat(chunks))
  return { car, root, leaves, rootBytes }
}

describe('simulated Curio: trustless gateway retrieval of indexed CARs', () => {
  it('indexes a CAR piece of a data set with withIPFSIndexing and serves its blocks and DAG', async () => {
    const dag = await smallDag()
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: dag.car })
    // Not indexed while the piece is only parked.
    expect((await fetch(`${url}/ipfs/${dag.root}?format=raw`)).status).toBe(404)
    const created = await SP.createDataSetAndAddPieces(client, {
      serviceURL: url,
      payee: chain.address,
      pieces: [{ pieceCid }],
      metadata: { withIPFSIndexing: '' },
    })
    await advance(3)
    await SP.waitForCreateDataSetAddPieces({ statusUrl: created.statusUrl })

    const rawRoot = await fetch(`${url}/ipfs/${dag.root}?format=raw`)
    expect(rawRoot.status).toBe(200)
    expect(rawRoot.headers.get('content-type')).toBe('application/vnd.ipld.raw')
    expect(Buffer.from(await rawRoot.arrayBuffer()).equals(Buffer.from(dag.rootBytes))).toBe(true)

    const leaf = await fetch(`${url}/ipfs/${dag.leaves[1].cid}`, { headers: { Accept: 'application/vnd.ipld.raw' } })
    expect(Buffer.from(await leaf.arrayBuffer()).equals(Buffer.from(dag.leaves[1].bytes))).toBe(true)

    const carRes = await fetch(`${url}/ipfs/${dag.root}`, { headers: { Accept: 'application/vnd.ipld.car' } })
    expect(carRes.status).toBe(200)
    expect(carRes.headers.get('content-type')).toContain('application/vnd.ipld.car')
    const reader = await CarReader.fromBytes(new Uint8Array(await carRes.arrayBuffer()))
    expect((await reader.getRoots()).map(String)).toEqual([dag.root.toString()])
    const order: string[] = []
    for await (const block of reader.blocks()) order.push(block.cid.toString())
    expect(order).toEqual([dag.root, ...dag.leaves.map((l) => l.cid)].map(String))

    const onlyRoot = await CarReader.fromBytes(
      new Uint8Array(await (await fetch(`${url}/ipfs/${dag.root}?format=car&dag-scope=block`)).arrayBuffer()),
    )
    const blocks: string[] = []
    for await (const block of onlyRoot.blocks()) blocks.push(block.cid.toString())
    expect(blocks).toEqual([dag.root.toString()])

    const absent = await fetch(`${url}/ipfs/${CID.create(1, raw.code, await sha256.digest(new Uint8Array([1])))}?format=raw`)
    expect(absent.status).toBe(404)
  })

  it('does not index pieces of data sets without withIPFSIndexing (Curio indexes on request only)', async () => {
    const dag = await smallDag()
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: dag.car })
    const created = await SP.createDataSetAndAddPieces(client, { serviceURL: url, payee: chain.address, pieces: [{ pieceCid }] })
    await advance(3)
    await SP.waitForCreateDataSetAddPieces({ statusUrl: created.statusUrl })
    expect((await fetch(`${url}/ipfs/${dag.root}?format=raw`)).status).toBe(404)
  })
})

describe('simulated Curio: data sets through the SDK', () => {
  it('creates a data set with pieces: its own addPieces message, then Curio’s status answers', async () => {
    const data = bytes(10_000, 'dataset')
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data })
    const created = await SP.createDataSetAndAddPieces(client, {
      serviceURL: url,
      payee: chain.address,
      pieces: [{ pieceCid }],
      metadata: { note: 'x' },
    })
    expect(created.statusUrl).toBe(`${url}/pdp/data-sets/created/${created.txHash}`)

    const [send] = chain.callsNamed('addPieces')
    expect(send.args[0]).toBe(0n)
    expect(send.args[1]).toBe(FWSS)
    expect((send.args[2] as string[])[0]).toBe(`0x${Buffer.from(pieceCid.bytes).toString('hex')}`)
    // PDPVerifier 3.4.0: the data set's cleanup deposit, paid by the provider (Curio handlers_create.go)
    expect(send.value).toBe(CLEANUP_DEPOSIT)
    expect(send.hash).toBe(created.txHash)

    const pending = await (await fetch(created.statusUrl)).json()
    expect(pending).toEqual({ createMessageHash: created.txHash, dataSetCreated: false, service: 'public', txStatus: 'pending', ok: null })

    // Mined in the next block, counted once another is built on it (Curio's MinEthConfidence).
    await advance(2)
    const done = await SP.waitForCreateDataSetAddPieces({ statusUrl: created.statusUrl })
    expect(done.dataSetId).toBe(1n)
    expect(done.piecesIds).toEqual([0n])

    const dataSet = await SP.getDataSet({ serviceURL: url, dataSetId: 1n })
    expect(dataSet.id).toBe(1n)
    expect(dataSet.pieces).toHaveLength(1)
    expect(dataSet.pieces[0].pieceCid.toString()).toBe(pieceCid.toString())
    expect(dataSet.pieces[0].pieceId).toBe(0n)

    // A second piece into the same data set.
    const second = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(2000, 'second') })
    const added = await SP.addPieces(client, {
      serviceURL: url,
      dataSetId: 1n,
      clientDataSetId: 7n,
      pieces: [{ pieceCid: second.pieceCid }],
    })
    expect(added.statusUrl).toBe(`${url}/pdp/data-sets/1/pieces/added/${added.txHash}`)
    expect(chain.callsNamed('addPieces')[1].args.slice(0, 2)).toEqual([1n, '0x0000000000000000000000000000000000000000'])
    await advance(2)
    const confirmation = await SP.waitForAddPieces({ statusUrl: added.statusUrl })
    expect(confirmation).toMatchObject({
      txStatus: 'confirmed',
      dataSetId: 1n,
      pieceCount: 1,
      addMessageOk: true,
      piecesAdded: true,
      confirmedPieceIds: [1n],
    })

    // Deletion goes on chain as schedulePieceDeletions.
    const deletion = await SP.schedulePieceDeletion(client, { serviceURL: url, dataSetId: 1n, pieceId: 0n, clientDataSetId: 7n })
    expect(deletion.hash).toBe(chain.callsNamed('schedulePieceDeletions')[0].hash)
  })

  it('creates an empty data set with createDataSet', async () => {
    const created = await SP.createDataSet(client, { serviceURL: url, payee: chain.address, cdn: false })
    expect(chain.callsNamed('createDataSet')[0].args[0]).toBe(FWSS)
    await advance(2)
    const done = await SP.waitForCreateDataSet({ statusUrl: created.statusUrl })
    expect(done).toMatchObject({ dataSetCreated: true, txStatus: 'confirmed', ok: true, dataSetId: 1n })
  })

  it('pays the verifier’s cleanup deposit with each data set it creates, as Curio does (PDPVerifier 3.4.0)', async () => {
    await SP.createDataSet(client, { serviceURL: url, payee: chain.address, cdn: false })
    expect(chain.callsNamed('createDataSet')[0].value).toBe(CLEANUP_DEPOSIT)
  })

  it('refuses a record keeper it does not serve, pieces it does not have, and answers a reverted estimate with the chain’s text', async () => {
    const foreign = await fetch(`${url}/pdp/data-sets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ recordKeeper: '0x00000000000000000000000000000000000000aa', extraData: '0x' }),
    })
    expect(foreign.status).toBe(403)
    expect(await foreign.text()).toContain('recordKeeper address not allowed for public service [eid: ')

    const absent = Piece.calculate(bytes(1000, 'never uploaded'))
    await expect(
      SP.createDataSetAndAddPieces(client, { serviceURL: url, payee: chain.address, pieces: [{ pieceCid: absent }] }),
    ).rejects.toThrow(
      /Failed to process request: failed to validate subPieces: subPiece CID baga\w+ not found or does not belong to service public \[eid: /,
    )

    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(1000, 'funds') })
    chain.failNextSend = 'execution reverted: InsufficientLockupFunds'
    const res = await SP.createDataSetAndAddPieces(client, { serviceURL: url, payee: chain.address, pieces: [{ pieceCid }] }).catch(
      (e: Error) => e,
    )
    expect((res as Error).message).toContain('chain: execution reverted: InsufficientLockupFunds')

    const noSet = await SP.addPieces(client, { serviceURL: url, dataSetId: 42n, clientDataSetId: 1n, pieces: [{ pieceCid }] }).catch(
      (e: Error) => e,
    )
    expect((noSet as Error).message).toContain('Data set not found [eid: ')
  })
})

describe('simulated Curio: pulls between providers', () => {
  it('pulls a piece from another provider, checks its CommP, and can then add it', async () => {
    const dirB = await mkdtemp(join(tmpdir(), 'pdp-provider-b-'))
    const chainB = new FakePdpChain()
    const b = await createPdpProvider({ dir: dirB, chain: chainB, recordKeepers: [FWSS], pollMs: 0 })
    const urlB = await b.listen()
    try {
      const data = bytes(50_000, 'pulled')
      const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data })
      const request = {
        serviceURL: urlB,
        payee: chainB.address,
        pieces: [{ pieceCid, sourceUrl: `${url}/piece/${pieceCid}` }],
        clientDataSetId: 3n,
      }
      const seen: string[] = []
      // The SDK signs once and polls the same request (Curio keys a pull on its extraData).
      const result = await SP.waitForPullPieces(client, { ...request, pollInterval: 10, onStatus: (r) => seen.push(r.status) })
      expect(result.status).toBe('complete')
      expect(result.pieces).toEqual([{ pieceCid: pieceCid.toString(), status: 'complete' }])
      // the check of the client's extraData carries the deposit the creation will carry
      expect(chainB.callsNamed('validateAddPieces(eth_call)').map((c) => c.value)).toEqual([CLEANUP_DEPOSIT])
      await expect(SP.findPiece({ serviceURL: urlB, pieceCid })).resolves.toBeDefined()
      const copy = await Piece.downloadAndValidate({ url: `${urlB}/piece/${pieceCid}`, expectedPieceCid: pieceCid })
      expect(copy.length).toBe(data.length)
      expect(seen.at(-1)).toBe('complete')
    } finally {
      await b.close()
      await rm(dirB, { recursive: true, force: true })
    }
  })

  it('fails a pull whose source serves other bytes', async () => {
    const dirB = await mkdtemp(join(tmpdir(), 'pdp-provider-b-'))
    const b = await createPdpProvider({ dir: dirB, chain: new FakePdpChain(), recordKeepers: [FWSS], pollMs: 0 })
    const urlB = await b.listen()
    try {
      const { pieceCid: served } = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(3000, 'served') })
      const claimed = Piece.calculate(bytes(3000, 'claimed'))
      const request = {
        serviceURL: urlB,
        payee: chain.address,
        pieces: [{ pieceCid: claimed, sourceUrl: `${url}/piece/${served}` }],
        clientDataSetId: 9n,
      }
      const { status } = await SP.waitForPullPieces(client, { ...request, pollInterval: 10 })
      expect(status).toBe('failed')
    } finally {
      await b.close()
      await rm(dirB, { recursive: true, force: true })
    }
  })
})

describe('simulated Curio: faults', () => {
  it('refuse: ping and writes answer 503, reads still work', async () => {
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(400, 'before') })
    await provider.setFault('refuse')
    await expect(SP.ping(url)).rejects.toThrow('Ping failed')
    await expect(SP.uploadPieceStreaming({ serviceURL: url, data: bytes(400, 'after') })).rejects.toThrow(
      'Failed to create upload session: Service Unavailable [eid: ',
    )
    await expect(SP.findPiece({ serviceURL: url, pieceCid })).resolves.toBeDefined()
    await provider.setFault(null)
    await expect(SP.ping(url)).resolves.toBeDefined()
  })

  it('stall: an upload hangs until the fault is lifted, then completes', async () => {
    await provider.setFault('stall')
    const data = bytes(20_000, 'stalled')
    let settled = false
    const upload = SP.uploadPieceStreaming({ serviceURL: url, data }).finally(() => (settled = true))
    while (provider.stalledUploads() === 0) await new Promise((r) => setImmediate(r))
    expect(settled).toBe(false)
    await provider.setFault(null)
    const { pieceCid } = await upload
    expect(pieceCid.toString()).toBe(Piece.calculate(data).toString())
  })

  it('stall: a client that gives up leaves nothing behind', async () => {
    await provider.setFault('stall')
    const controller = new AbortController()
    const upload = SP.uploadPieceStreaming({ serviceURL: url, data: bytes(20_000, 'abandoned'), signal: controller.signal })
    while (provider.stalledUploads() === 0) await new Promise((r) => setImmediate(r))
    controller.abort()
    await expect(upload).rejects.toThrow()
    while (provider.stalledUploads() !== 0) await new Promise((r) => setImmediate(r))
  })

  it('lose: the piece is still listed but retrieval answers 404', async () => {
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data: bytes(3000, 'lost') })
    await provider.setFault('lose')
    const res = await fetch(`${url}/piece/${pieceCid}`)
    expect(res.status).toBe(404)
    await expect(SP.findPiece({ serviceURL: url, pieceCid })).resolves.toBeDefined()
  })
})

describe('simulated Curio: seeded transfer faults', () => {
  it('a drawn fail cuts an upload part-way and the SDK reports it; the next draw lets one through', async () => {
    const draws: ('fail' | null)[] = ['fail', null]
    const faults: FaultPlan = {
      rate: 0.5,
      draw: () => (draws.shift() === 'fail' ? { kind: 'fail' } : null),
      counts: () => ({ chain: { fail: 0, stall: 0 }, stream: { fail: 0, stall: 0 }, transfer: { fail: 1, stall: 0 } }),
    }
    await provider.close()
    provider = await createPdpProvider({ dir, chain, recordKeepers: [FWSS], pollMs: 0, faults })
    url = await provider.listen()
    const data = bytes(50_000, 'faulty')
    await expect(SP.uploadPieceStreaming({ serviceURL: url, data })).rejects.toThrow()
    const { pieceCid } = await SP.uploadPieceStreaming({ serviceURL: url, data })
    expect(pieceCid.toString()).toBe(Piece.calculate(data).toString())
  })
})

describe('simulated Curio: registration capabilities', () => {
  it('encodes the PDP offering so that the SDK decodes it back', () => {
    const offering = {
      serviceURL: 'http://127.0.0.1:4321',
      minPieceSizeInBytes: 127n,
      maxPieceSizeInBytes: 1_065_353_216n,
      storagePricePerTibPerDay: 100_000_000_000_000_000n,
      minProvingPeriodInEpochs: 0n,
      location: 'loopback',
      paymentTokenAddress: '0x00000000000000000000000000000000000Cafe1' as Address,
      ipniPiece: true,
      ipniIpfs: true,
      ipniPeerId: '0x0024080112205f1b' as const,
    }
    const { keys, values } = offeringCapabilities(offering, { region: 'sim' })
    expect(keys.slice(0, 7)).toEqual([
      'serviceURL',
      'minPieceSizeInBytes',
      'maxPieceSizeInBytes',
      'storagePricePerTibPerDay',
      'minProvingPeriodInEpochs',
      'location',
      'paymentTokenAddress',
    ])
    // Zero is one zero byte, as Curio encodes it.
    expect(values[4]).toBe('0x00')
    const decoded = decodePDPCapabilities(capabilitiesListToObject(keys, values))
    expect(decoded).toMatchObject({
      serviceURL: offering.serviceURL,
      minPieceSizeInBytes: 127n,
      maxPieceSizeInBytes: 1_065_353_216n,
      storagePricePerTibPerDay: offering.storagePricePerTibPerDay,
      minProvingPeriodInEpochs: 0n,
      location: 'loopback',
      paymentTokenAddress: offering.paymentTokenAddress.toLowerCase(),
      ipniPiece: true,
      ipniIpfs: true,
    })
    expect(decoded.extraCapabilities).toMatchObject({ region: '0x73696d' })
  })
})
