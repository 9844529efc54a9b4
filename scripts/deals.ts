import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDealStore } from '../server/gateway/deals/deal-store.ts'
import type { DealAudit } from '../server/gateway/deals/types.ts'
import { failureText } from '../server/shared/contracts/copy-failure.ts'
import { loadConfig } from '../server/shared/config.ts'
import { openGatewaySql } from '../server/gateway/store.ts'
import { groupUsage, type GroupUsage } from '../server/gateway/retire/usage.ts'
import { storageSpend, type MarketShare, type StorageSpend } from '../server/gateway/retire/spend.ts'
import { formatUnits } from 'viem'

const HELP = `Usage: npm run deals -- <command> [--json]

The gateway's storage deals as it made them, for an audit: per deal its UUID
(the id the provider knows it by), provider, piece, state and chain deal id,
the signed proposal exactly as sent (base64 of its CBOR), the proposal CID,
the provider's answer, and every state change with its time. Reads the
gateway's records: the gateway schema of DATABASE_URL when it is set, else
DATA_DIR/gateway/gateway.sqlite (DATA_DIR defaults to ./data).

Commands:
  list [--group N]     every deal (or one group's), oldest first
  show UUID            one deal, with its signed proposal and history
  usage                bytes stored, dead and retired, and what the copies
                       still paid for cost a month, now and after retirement

Usage counts each group's bytes once, whatever its copies: live (with the
bytes of deleted files inside live groups, which only compaction wins back),
dead (every file deleted or replaced: kept for RETIRE_AFTER_SECONDS, still
paid for) and retired. Money is per route, in its own token, never added
up; a month is 86 400 epochs (30 days), as the warm storage service counts.
  PDP copies (USDFC): each data set's Filecoin Pay rail pays FWSS 1.3.x's
    rate: its pieces' raw size at the storage price per TiB a month, plus the
    per-data-set fee, nothing once it is empty. The pieces are the gateway's
    copies on chain (their leaves read from their piece CIDs); the prices are
    those the gateway last read from the service (getPriceList) when it
    worked out an upload, kept in its records with the date: no chain is
    asked. Retiring removes the dead groups' pieces (at the provider's next
    proving period), which lowers their data sets' rates.
  Deal-market deals (FIL): each is paid its signed proposal's
    StoragePricePerEpoch until its end epoch. A deal cannot be cancelled:
    retiring saves nothing on it now; it is paid until its end, not renewed.
Copies count while published or active, as the gateway last saw them.

Options:
  --group N            only the deals of gateway group N
  --json               print JSON instead of lines (amounts as decimal
                       strings in USDFC or FIL)
  -h, --help           this text
`

class UsageError extends Error {}

const iso = (ms: number) => new Date(ms).toISOString()

function asJson(d: DealAudit) {
  const { tokenHash: _secret, signedProposal, ...rest } = d
  return {
    ...rest,
    signedProposal: signedProposal && Buffer.from(signedProposal).toString('base64'),
    events: d.events.map((e) => ({ ...e, at: iso(e.atMs) })),
  }
}

function line(d: DealAudit): string {
  const chain = d.dealId !== undefined ? ` deal ${d.dealId}` : d.dataSetId !== undefined ? ` data set ${d.dataSetId}` : ''
  const why = d.failure ? ` (${failureText(d.failure)})` : ''
  return `${d.proposalId ?? d.addTxHash ?? `(no UUID: #${d.id})`}  group ${d.groupId}  ${d.provider}  ${d.state}${chain}${why}  ${iso(d.createdMs)}`
}

function details(d: DealAudit): string {
  const rows = [
    line(d),
    `  piece          ${d.pieceCid}`,
    `  epochs         start ${d.startEpoch}, end ${d.endEpoch}${d.proposalEpoch !== undefined ? `, proposed at ${d.proposalEpoch}` : ''}`,
    `  proposal CID   ${d.proposalCid ?? '-'}`,
    `  answer         ${d.providerAnswer ?? '-'}`,
    `  retrievable    ${d.retrievable ? 'yes' : 'no'}${d.checkedMs ? ` (checked ${iso(d.checkedMs)})` : ''}`,
    '  history',
    ...d.events.map((e) => `    ${iso(e.atMs)}  ${e.state}${e.reason ? ` (${e.reason})` : ''}`),
    `  signed proposal (base64 CBOR)`,
    `    ${d.signedProposal ? Buffer.from(d.signedProposal).toString('base64') : '-'}`,
  ]
  return rows.join('\n')
}

/** Bytes and groups of each liveness, and the deleted files' bytes inside live groups. */
function bytesOf(groups: GroupUsage[]) {
  const of = (l: GroupUsage['liveness']) => {
    const these = groups.filter((g) => g.liveness === l)
    return { groups: these.length, bytes: these.reduce((n, g) => n + g.bytes, 0) }
  }
  const live = of('live')
  const deadInLiveGroups = groups.filter((g) => g.liveness === 'live').reduce((n, g) => n + g.deadBytes, 0)
  return { live: { ...live, deadInLiveGroups }, dead: of('dead'), retired: of('retired') }
}

const token = (amount: bigint | undefined) => (amount === undefined ? undefined : formatUnits(amount, 18))

function usageJson(bytes: ReturnType<typeof bytesOf>, spend: StorageSpend) {
  const { pdp, market } = spend
  const share = (s: MarketShare) => ({ ...s, perMonth: token(s.perMonth) })
  return {
    bytes,
    pdp: {
      unit: 'USDFC',
      ...(pdp.rates && {
        rates: {
          storagePerTibPerMonth: token(pdp.rates.storagePerTibPerMonth),
          datasetFeePerMonth: token(pdp.rates.datasetFeePerMonth),
          seenAt: iso(pdp.rates.seenMs),
        },
      }),
      copies: pdp.copies,
      dataSets: pdp.dataSets,
      unsized: pdp.unsized,
      perMonthNow: token(pdp.perMonthNow),
      savedPerMonth: token(pdp.savedPerMonth),
      perMonthAfter: token(pdp.perMonthAfter),
    },
    market: {
      unit: 'FIL',
      perMonthNow: token(market.perMonthNow),
      // Deals cannot be cancelled: retiring saves nothing on them now.
      savedPerMonth: '0',
      live: share(market.byLiveness.live),
      dead: share(market.byLiveness.dead),
      retired: share(market.byLiveness.retired),
      unpriced: market.unpriced,
    },
  }
}

const size = (n: number) => `${n} bytes (${(n / 2 ** 20).toFixed(1)} MiB)`
const groupCount = (n: number) => `${n} group${n === 1 ? '' : 's'}`
const dealCount = (n: number) => `${n} deal${n === 1 ? '' : 's'}`

function usageLines(bytes: ReturnType<typeof bytesOf>, spend: StorageSpend): string[] {
  const { pdp, market } = spend
  const usdfc = (a: bigint | undefined) => `${token(a)} USDFC a month`
  const fil = (a: bigint) => `${token(a)} FIL a month`
  const ofDead = (what: string, s: MarketShare) =>
    s.deals === 0
      ? []
      : [`  ${what.padEnd(21)}${fil(s.perMonth)} (${dealCount(s.deals)}), paid until epoch ${s.paidUntilEpoch}, not renewed`]
  const ending = [market.byLiveness.dead, market.byLiveness.retired].filter((s) => s.deals > 0)
  const lastEnd = Math.max(0, ...ending.map((s) => s.paidUntilEpoch ?? 0))
  return [
    'Bytes (each group once, whatever its copies)',
    `  stored, live         ${size(bytes.live.bytes)} in ${groupCount(bytes.live.groups)}`,
    `    of deleted files   ${size(bytes.live.deadInLiveGroups)} inside live groups (what compaction would win back)`,
    `  dead                 ${size(bytes.dead.bytes)} in ${groupCount(bytes.dead.groups)}, in their grace period: still paid for until retired`,
    `  retired              ${size(bytes.retired.bytes)} in ${groupCount(bytes.retired.groups)}`,
    '',
    pdp.rates
      ? `PDP copies (Filecoin Pay rails at FWSS prices read ${iso(pdp.rates.seenMs)}: ${token(pdp.rates.storagePerTibPerMonth)} USDFC per TiB a month, ${token(pdp.rates.datasetFeePerMonth)} USDFC per data set a month)`
      : 'PDP copies (Filecoin Pay rails)',
    ...(pdp.rates || pdp.copies === 0
      ? [
          `  paid now             ${usdfc(pdp.perMonthNow ?? 0n)} (${pdp.copies} copies in ${pdp.dataSets} data sets)`,
          `  retiring the dead    saves ${usdfc(pdp.savedPerMonth ?? 0n)}`,
          `  after retirement     ${usdfc(pdp.perMonthAfter ?? 0n)}`,
        ]
      : [
          `  ${pdp.copies} copies in ${pdp.dataSets} data sets; no prices recorded yet: the gateway keeps them when it next works out an upload`,
        ]),
    ...(pdp.unsized > 0 ? [`  ${pdp.unsized} copies whose piece CID gives no size (not a v2 piece CID), not counted`] : []),
    '',
    "Deal-market deals (each deal's StoragePricePerEpoch until its end epoch)",
    `  paid now             ${fil(market.perMonthNow)} (${dealCount(Object.values(market.byLiveness).reduce((n, s) => n + s.deals, 0))})`,
    ...ofDead('of dead groups', market.byLiveness.dead),
    ...ofDead('of retired groups', market.byLiveness.retired),
    `  retiring the dead    saves 0 FIL a month now: a deal cannot be cancelled; it is not renewed`,
    ending.length > 0
      ? `  after retirement     ${fil(market.perMonthNow)} until epoch ${lastEnd}, then ${fil(market.byLiveness.live.perMonth)}`
      : `  after retirement     ${fil(market.perMonthNow)}`,
    ...(market.unpriced > 0 ? [`  ${dealCount(market.unpriced)} without a recorded proposal, not counted`] : []),
  ]
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { json: { type: 'boolean' }, group: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
  const [command, arg] = positionals
  if (values.help || !command) {
    process.stdout.write(HELP)
    if (!values.help) process.exitCode = 2
    return
  }
  const config = loadConfig().gateway
  const file = join(config.dataDir, 'gateway.sqlite')
  if (!config.databaseUrl && !existsSync(file)) throw new UsageError(`no gateway data at ${file} (has the gateway run with this DATA_DIR?)`)
  const sql = await openGatewaySql(config)
  try {
    const store = await createDealStore(sql)
    if (command === 'list') {
      const group = values.group === undefined ? undefined : Number(values.group)
      if (group !== undefined && !Number.isSafeInteger(group)) throw new UsageError('--group takes a group number')
      const deals = await store.audit(group)
      process.stdout.write(values.json ? `${JSON.stringify(deals.map(asJson), null, 2)}\n` : deals.map((d) => `${line(d)}\n`).join(''))
      return
    }
    if (command === 'show') {
      if (!arg) throw new UsageError('show needs a deal UUID (see `npm run deals -- list`)')
      const deal = await store.auditOf(arg)
      if (!deal) throw new UsageError(`no deal with UUID ${arg}`)
      process.stdout.write(values.json ? `${JSON.stringify(asJson(deal), null, 2)}\n` : `${details(deal)}\n`)
      return
    }
    if (command === 'usage') {
      const groups = await groupUsage(sql)
      const spend = await storageSpend(sql, groups, await store.pdpRates())
      const bytes = bytesOf(groups)
      process.stdout.write(
        values.json ? `${JSON.stringify(usageJson(bytes, spend), null, 2)}\n` : `${usageLines(bytes, spend).join('\n')}\n`,
      )
      return
    }
    throw new UsageError(`unknown command "${command}" (list, show, usage)`)
  } finally {
    await sql.close()
  }
}

main().catch((err) => {
  const known =
    err instanceof UsageError ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ||
    (err as { name?: string }).name === 'ConfigError'
  process.stderr.write(`${known ? (err as Error).message : `deals failed: ${(err as Error).message}`}\n`)
  process.exit(2)
})
