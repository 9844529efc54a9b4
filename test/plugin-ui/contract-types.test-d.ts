/**
 * Type-level: the sidebar tab and the admin page read exactly what the bridge
 * sends. Checked by `npm run typecheck` (part of `npm test`), not run by
 * vitest: a type that drifts from the server's contract stops the typecheck.
 */
import type { z } from 'zod'
import type { toMetadataFile } from '../../server/bridge/convert.ts'
import type {
  LinkSettingsInput,
  LinkTestResult as ServedLinkTestResult,
  PublicLinkSettings,
} from '../../server/shared/contracts/admin-settings.ts'
import type { DealState as GatewayDealState, GroupState as GatewayGroupState } from '../../server/shared/contracts/file-info.ts'
import type { MetadataFile, MetadataResponse } from '../../server/shared/contracts/metadata-record.ts'
import type { NetworkName } from '../../server/shared/contracts/network.ts'
import type { TabConfigResponse } from '../../server/shared/contracts/tab-config.ts'
import type { GatewayLinkSettings, GatewayLinkUpdate, LinkTestResult } from '../../plugin-ui/services/admin-api.ts'
import type { NETWORKS } from '../../plugin-ui/utils/network.ts'
import type { Deal, FileRecord, FileState, GroupState, Network, TabConfig } from '../../plugin-ui/types.ts'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expectTrue<T extends true>(): T | void {}

// What get-file-metadata answers is what the tab reads.
expectTrue<Equal<FileRecord, MetadataFile>>()
expectTrue<Equal<FileRecord, MetadataResponse['metadata']['file']>>()
expectTrue<Equal<ReturnType<typeof toMetadataFile>, FileRecord>>()
expectTrue<Equal<Deal['dealId'], number>>()
expectTrue<Equal<FileState, NonNullable<FileRecord['details']>['state']>>()

// Every group state our gateway sends, as the bridge spells it, has a label in the tab; a deal's states likewise.
type SpeltGroupState = GatewayGroupState extends infer S ? (S extends 'ready_for_deals' ? 'ready for deals' : S) : never
expectTrue<Equal<GroupState, SpeltGroupState>>()
expectTrue<Equal<Deal['state'], string>>()
expectTrue<GatewayDealState extends Deal['state'] ? true : false>()

// The tab config: every network the bridge may name is one the tab knows, and the fields it reads are the ones served.
expectTrue<Equal<Network, NetworkName>>()
expectTrue<Equal<(typeof NETWORKS)[number], NetworkName>>()
expectTrue<TabConfigResponse['config'] extends TabConfig ? true : false>()
expectTrue<Equal<keyof TabConfig, keyof TabConfigResponse['config']>>()

// The admin page: what it shows, what it sends, what the link test answers.
expectTrue<PublicLinkSettings extends GatewayLinkSettings ? true : false>()
expectTrue<Equal<GatewayLinkUpdate, z.input<typeof LinkSettingsInput>>>()
expectTrue<Equal<LinkTestResult, ServedLinkTestResult>>()
