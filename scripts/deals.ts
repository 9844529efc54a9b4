import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDealStore } from '../server/gateway/deals/deal-store.ts'
import type { DealAudit } from '../server/gateway/deals/types.ts'
import { failureText } from '../server/shared/contracts/copy-failure.ts'
import { loadConfig } from '../server/shared/config.ts'
import { openGatewaySql } from '../server/gateway/store.ts'

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

Options:
  --group N            only the deals of gateway group N
  --json               print JSON instead of lines
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
    throw new UsageError(`unknown command "${command}" (list, show)`)
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
