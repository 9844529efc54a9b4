import type { ChainClock } from '../../shared/epochs.ts'
import type { FocContext } from './context.ts'

/**
 * How far back from the head the clock's second block is looked for when the
 * node does not serve block 0: 1 000 epochs, 8 h 20 min of 30 s epochs, well
 * inside the 24 h a public Lotus gateway serves by default (lotus-gateway's
 * lookback cap, which refuses older tipsets).
 */
const REFERENCE_SPAN = 1000
/** Heights tried one after another from there: a null round has no block, and runs of them are short. */
const NULL_ROUND_TRIES = 10
/**
 * The least time between the two blocks: blocks are stamped in whole seconds, so a sped-up chain's epoch
 * (0.1 s) read over a shorter span would be off by more than a second in a minute, and every date with it.
 */
const MIN_SPAN_SECONDS = 60

/** One block as the clock needs it: its height and its time (unix seconds). */
export interface ChainBlock {
  number: bigint
  timestamp: bigint
}

/** Where the clock reads blocks: the latest one, or one at a height; throws when the node has none there. */
export type BlockSource = (at: bigint | 'latest') => Promise<ChainBlock>

/** A viem client's blocks as the clock reads them (eth_getBlockByNumber). */
export const viemBlocks =
  (client: Pick<FocContext['client'], 'getBlock'>): BlockSource =>
  async (at) => {
    const block = await client.getBlock(at === 'latest' ? { blockTag: 'latest' } : { blockNumber: at })
    if (block.number === null) throw new Error(`the node answered a pending block for ${at}`)
    return { number: block.number, timestamp: block.timestamp }
  }

/**
 * The FEVM chain's clock, read from its blocks: epoch e's block is at
 * `genesis + e × epochSeconds`. What this relies on: on Filecoin a tipset's
 * timestamp is its genesis's plus BlockDelaySecs (30 s on calibration and
 * mainnet) times its height, null rounds included (they only leave heights
 * without a block), and an FEVM block is its tipset; the simulated Onchain
 * Cloud stamps epoch e at its genesis plus e times its (sped-up) epoch,
 * floored to the second. So two blocks give the line: the head and block 0
 * when the node serves it (the longest span, which the whole seconds of a
 * sped-up chain need), else a block about REFERENCE_SPAN epochs back, since a
 * public node may not serve old blocks. A height Lotus answers with an error
 * (a null round: "requested epoch was a null round") is stepped over.
 * Throws when no second block can be read, or none a minute older than the head (a chain just started).
 */
export async function readChainClock(blocks: BlockSource): Promise<ChainClock> {
  const head = await blocks('latest')
  const reference = (await blocks(0n).catch(() => undefined)) ?? (await servedNear(blocks, head.number))
  if (!reference) {
    throw new Error(
      `the chain's node serves neither block 0 nor any of the ${NULL_ROUND_TRIES} blocks from ${Math.max(1, Number(head.number) - REFERENCE_SPAN)}: its clock cannot be read`,
    )
  }
  const epochs = Number(head.number - reference.number)
  if (epochs <= 0) throw new Error(`the chain has no block after epoch ${reference.number} yet: its clock cannot be read`)
  const seconds = Number(head.timestamp - reference.timestamp)
  if (seconds < MIN_SPAN_SECONDS) {
    throw new Error(
      `the chain's blocks ${reference.number} and ${head.number} are ${seconds} s apart, too close to tell its clock by (blocks are stamped to the second): it has to have run ${MIN_SPAN_SECONDS} s`,
    )
  }
  const epochSeconds = seconds / epochs
  return { genesis: Number(reference.timestamp) - Number(reference.number) * epochSeconds, epochSeconds }
}

/**
 * The chain's clock read once and then kept, since a chain's genesis and block time do not change; a
 * read that failed is not kept, so the next call asks again.
 */
export function keptClock(read: () => Promise<ChainClock>): () => Promise<ChainClock> {
  let clock: Promise<ChainClock> | undefined
  return () =>
    (clock ??= read().catch((err: unknown) => {
      clock = undefined
      throw err
    }))
}

/** The first block the node serves among NULL_ROUND_TRIES heights from REFERENCE_SPAN before `head`; undefined when none. */
async function servedNear(blocks: BlockSource, head: bigint): Promise<ChainBlock | undefined> {
  const from = head > BigInt(REFERENCE_SPAN) ? head - BigInt(REFERENCE_SPAN) : 1n
  for (let height = from; height < head && height < from + BigInt(NULL_ROUND_TRIES); height++) {
    const block = await blocks(height).catch(() => undefined)
    if (block) return block
  }
  return undefined
}
