import { formatUnits } from 'viem'
import { FocFundsError, type FocAccount, type FocClient, type FocFundingRequest } from '../../../network/foc/client.ts'
import { EPOCHS_PER_DAY } from '../../../shared/epochs.ts'
import { fundedUntil } from '../../../shared/funded-until.ts'
import { createProblemNote, type Problem } from '../note.ts'
import type { DealStore, RouteContext } from '../types.ts'
import type { PdpFunding, PdpRouteOptions } from './types.ts'

/** An endEpoch beyond any real runway: ten years, for accounts whose rate is nothing yet. */
const MAX_RUNWAY_EPOCHS = 10 * 365 * EPOCHS_PER_DAY
/** A runway this short is a WARNING (filecoin-pin's threshold). */
const WARNING_RUNWAY_EPOCHS = 14 * EPOCHS_PER_DAY
/** What an automatic top-up brings the runway back to. */
const TOP_UP_RUNWAY_EPOCHS = 30 * EPOCHS_PER_DAY

/** USDFC has 18 decimals: an amount a person deposits is said in whole cents. */
const CENT = 10n ** 16n
const roundUpToCents = (amount: bigint) => ((amount + CENT - 1n) / CENT) * CENT
const usdfc = (amount: bigint) => `${formatUnits(amount, 18)} USDFC`

/** What pays for the PDP copies: the Onchain Cloud account's runway, and whether it can pay for more. */
export interface PdpFunds {
  /**
   * Whether the account can pay for `bytes` more in the copies `request`
   * describes (the client counts everything GA charges for them): topped up
   * from the wallet when allowed, else the funds problem says what to
   * deposit (and nothing is uploaded until then).
   */
  canPay(bytes: number, request: FocFundingRequest): Promise<boolean>
  /**
   * The account's runway from its summary: kept for the status and the
   * copies' end epochs, said in the log when it turns short or runs out (once
   * per change), and, with automatic deposits, brought back to 30 days from
   * the wallet before deficit (a rail a provider terminated in deficit does
   * not come back), the warning then left unsaid. Returns the epoch the copies are funded until.
   */
  readRunway(account: FocAccount): Promise<number>
  /**
   * An upload the account could not pay for. With automatic deposits, a shortfall the chain's rule named (a new
   * data set's lockup: the estimate cannot know the SDK will open one) is deposited from the wallet, and the next
   * pass uploads; otherwise nothing is uploaded until one stores a copy, and the funds note says why.
   */
  uploadRefused(err: FocFundsError): Promise<void>
  /** An upload stored a copy: a refusal an upload met before is over (the account paid). */
  uploadStored(): void
  /** Set while nothing is uploaded: the account cannot pay. */
  problem(): Problem | undefined
  /** The account's runway as last read. */
  runway(): PdpFunding | undefined
}

export interface PdpFundsOptions extends Pick<RouteContext, 'logger'>, Pick<PdpRouteOptions, 'autoDeposit' | 'clock'> {
  client: Pick<FocClient, 'address' | 'funding' | 'fund'>
  /** Where the storage prices each estimate was worked out with are kept (for `npm run deals -- usage`). */
  deals: Pick<DealStore, 'recordPdpRates'>
}

export function createPdpFunds(o: PdpFundsOptions): PdpFunds {
  const { client, logger } = o
  const note = createProblemNote(logger, {
    level: 'error',
    fields: { payer: client.address },
    prefix: 'no PDP uploads: ',
    cleared: 'the account can pay for PDP uploads again',
  })
  let funding: PdpFunding | undefined

  /** Deposits `amount` from the wallet; when it holds too little, nothing is uploaded and the funds note says so. */
  async function deposit(amount: bigint, done: string, why: string): Promise<boolean> {
    try {
      const hash = await client.fund(amount)
      logger.info({ amount: usdfc(amount), hash }, done)
      note.set(undefined)
      return true
    } catch (err) {
      if (!(err instanceof FocFundsError)) throw err
      note.set({ code: 'WALLET_SHORT', words: `no funds: deposit USDFC: ${why}${err.message}` })
      return false
    }
  }

  /** Brings a short runway back to 30 days from the wallet; whether a deposit went out. */
  async function topUp(account: FocAccount): Promise<boolean> {
    const amount = roundUpToCents(account.lockupRatePerEpoch * BigInt(TOP_UP_RUNWAY_EPOCHS) - account.availableFunds)
    if (amount <= 0n) return false
    return deposit(
      amount,
      'deposited USDFC into Filecoin Pay: the PDP copies are paid for 30 more days',
      "the PDP copies' funds run short, and ",
    )
  }

  return {
    async canPay(bytes, request) {
      const answer = await client.funding(bytes, request)
      if (answer.rates) await o.deals.recordPdpRates(answer.rates)
      if (answer.ready) {
        // A refusal an upload met (the account or the wallet short) stands until an upload stores a copy
        // (uploadStored): the estimate said "ready" before it too, and saying "cleared" each pass is a new line each time.
        if (note.current?.code !== 'WALLET_SHORT') note.set(undefined)
        return true
      }
      // What the client asks for covers GA's charges for these copies and a day of the account's rate; a tenth
      // more and another day of the new rate leave room for a provider the SDK passes over for another.
      const amount = roundUpToCents(answer.depositNeeded + answer.depositNeeded / 10n + answer.ratePerEpoch * BigInt(EPOCHS_PER_DAY))
      if (!o.autoDeposit) {
        const approval = answer.needsApproval ? ', and the warm storage service approved,' : ''
        note.set({
          code: 'DEPOSIT_NEEDED',
          words: `no funds: deposit USDFC: storing needs ${usdfc(amount)} more in Filecoin Pay${approval} before anything is uploaded (npm run wallet -- deposit ${formatUnits(amount, 18)} USDFC)`,
        })
        return false
      }
      return deposit(amount, 'deposited USDFC into Filecoin Pay for PDP uploads', '')
    },

    async readRunway(account) {
      const head = Number(account.epoch)
      const runway = Number(account.runwayEpochs > BigInt(MAX_RUNWAY_EPOCHS) ? BigInt(MAX_RUNWAY_EPOCHS) : account.runwayEpochs)
      const paying = account.lockupRatePerEpoch > 0n
      // Now is the head's time on the FEVM chain's own clock: the days left are the chain's, whatever the gateway's clock says.
      const { clock } = o
      const nowSeconds = clock.genesis + head * clock.epochSeconds
      /** The date and the network's days of `epochs` from the head, from the one 'funded until' (server/shared/funded-until.ts). */
      const lasting = (epochs: number) => {
        const until = fundedUntil(head + epochs, clock, nowSeconds)
        return { runwayEpochs: epochs, fundedUntilMs: until.at * 1000, fundedDays: until.networkDays }
      }
      const now: PdpFunding = {
        status: paying && account.availableFunds <= 0n ? 'DEFICIT' : paying && runway <= WARNING_RUNWAY_EPOCHS ? 'WARNING' : 'HEALTHY',
        funds: account.funds,
        ...lasting(runway),
      }
      // Topped up first, to the 30 days the deposit buys: a warning the deposit answers in the same pass only alarms.
      // The date and the days both say the 30 days, so the admin page's aside agrees with its date.
      if (now.status !== 'HEALTHY' && o.autoDeposit && (await topUp(account))) {
        funding = { ...now, status: 'HEALTHY', ...lasting(TOP_UP_RUNWAY_EPOCHS) }
        return head + TOP_UP_RUNWAY_EPOCHS
      }
      if (now.status !== (funding?.status ?? 'HEALTHY')) {
        const days = Math.floor(now.runwayEpochs / EPOCHS_PER_DAY)
        const fields = { payer: client.address, funds: usdfc(now.funds), runwayDays: days }
        if (now.status === 'HEALTHY')
          logger.info({ payer: client.address, funds: usdfc(now.funds) }, 'the Onchain Cloud account is funded again')
        else if (now.status === 'DEFICIT') logger.warn(fields, 'the Onchain Cloud account no longer pays for the PDP copies: deposit USDFC')
        else logger.warn(fields, `the Onchain Cloud account pays for the PDP copies for ${days} more days: deposit USDFC`)
      }
      funding = now
      return head + runway
    },

    async uploadRefused(err) {
      const short = err.shortBy ?? 0n
      if (!o.autoDeposit || short <= 0n) return note.set({ code: 'WALLET_SHORT', words: `no funds: deposit USDFC: ${err.message}` })
      // A tenth more, so that rounding and the rate's next epochs do not leave it short again at once.
      await deposit(roundUpToCents(short + short / 10n), 'deposited USDFC into Filecoin Pay for a new PDP data set', `${err.message}; `)
    },
    uploadStored() {
      if (note.current?.code === 'WALLET_SHORT') note.set(undefined)
    },
    problem: () => note.current,
    runway: () => funding,
  }
}
