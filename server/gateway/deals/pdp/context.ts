import type { FocClient } from '../../../network/foc/client.ts'
import { createProblemNote, type Note, type Problem } from '../note.ts'
import { createPacer, inChainTime, type Pacer } from '../pacer.ts'
import type { GroupDeal, RouteContext } from '../types.ts'
import type { PdpFunding, PdpRouteOptions, PdpUpload } from './types.ts'

/** The wait before the first retry of a failed removal, and the longest: 10 epochs, doubling up to a day of chain time. */
const REMOVAL_RETRY_FIRST_EPOCHS = 10
const REMOVAL_RETRY_MAX_EPOCHS = 2880

/**
 * A group whose upload stored no copy waits before it is sent again: 4 epochs
 * (2 minutes of chain time), doubling up to the route's retry wait, so that
 * one failing group does not take every pass's upload from the others.
 */
const UPLOAD_RETRY_FIRST_EPOCHS = 4

/** An upload under way: where it stands, how to cut it short, and when it settles. */
export interface Upload {
  upload: PdpUpload
  done: Promise<void>
  controller: AbortController
}

/** What the route's verbs share: the gateway's context, the Onchain Cloud client, the policy, and the route's own state. */
export interface PdpContext extends RouteContext {
  client: FocClient
  options: PdpRouteOptions
  uploads: Map<number, Upload>
  /** Why the last upload of a group stored no copy (providers refused, stalled, none to ask). */
  refused: Map<number, string>
  /** When each group whose last upload stored no copy may be sent again (back-off, doubling). */
  retries: Pacer<number>
  /**
   * Groups sent, with their counting copies before and when the upload settled: the next pass sees whether
   * it stored one (the wait after one that did not runs from when it settled).
   */
  sent: Map<number, { before: number; settledMs?: number }>
  /** Uploads that may run at once, as the last placing pass worked it out (one until the account has its data sets). */
  slots: number
  /** Groups whose CAR is larger than one upload takes, by their CAR's size: never sent. */
  oversized: Map<number, number>
  /**
   * The FEVM chain's head as last read (every pass reads it), and when (gateway time): where the chain is now, for
   * the reasons' "in about …". Not carried forward by the gateway's clock: that need not run as the chain does.
   */
  head?: { epoch: number; atMs: number }
  /** When each copy's proofs, and the account, are read next. */
  polls: Pacer<number | 'account'>
  /** Copies seen with proofs missing, and the epoch they were first seen so. */
  missingSince: Map<number, number>
  /** Nothing is uploaded while this is set: the account cannot pay. */
  funds: Note<Problem>
  /** The account's runway as last read. */
  funding?: PdpFunding
  /** Groups with copies whose add may have been sent before a restart: looked up on chain until each is adopted or failed. */
  orphans: Set<number>
  /** Copies that no longer count whose piece is to be removed from its data set, and when to try next. */
  removals: Pacer<number>
  /** What is done once after a start: orphans looked for, ended copies' pieces queued for removal. */
  resumed: { orphans: boolean; removals: boolean }
}

export function createPdpContext(c: RouteContext, options: PdpRouteOptions): PdpContext {
  const epochMs = options.clock.epochSeconds * 1000
  return {
    ...c,
    client: options.client,
    options,
    uploads: new Map(),
    refused: new Map(),
    retries: createPacer({
      now: c.now,
      everyMs: 0,
      backoff: { firstMs: UPLOAD_RETRY_FIRST_EPOCHS * epochMs, maxMs: Math.max(UPLOAD_RETRY_FIRST_EPOCHS, c.retryAfterEpochs) * epochMs },
    }),
    sent: new Map(),
    slots: 1,
    oversized: new Map(),
    // Chain time, like the engine's other waits: a sped-up simulated network asks as often per epoch as a real one.
    polls: createPacer({ now: c.now, everyMs: inChainTime(options.pollMs, options.clock.epochSeconds) }),
    missingSince: new Map(),
    funds: createProblemNote(c.logger, {
      level: 'error',
      fields: { payer: options.client.address },
      prefix: 'no PDP uploads: ',
      cleared: 'the account can pay for PDP uploads again',
    }),
    orphans: new Set(),
    removals: createPacer({
      now: c.now,
      everyMs: 0,
      backoff: { firstMs: REMOVAL_RETRY_FIRST_EPOCHS * epochMs, maxMs: REMOVAL_RETRY_MAX_EPOCHS * epochMs },
    }),
    resumed: { orphans: false, removals: false },
  }
}

export const providerName = (providerId: number) => `pdp:${providerId}`
export const providerIdOf = (provider: string) => Number(provider.slice('pdp:'.length))

/** Chain time since a row last changed, in this chain's epochs. */
export const epochsSince = (p: PdpContext, d: GroupDeal) => (p.now() - d.updatedMs) / 1000 / p.options.clock.epochSeconds
