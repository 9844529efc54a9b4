import { AdminSettingsResponseSchema, LinkSettingsInput, LinkTestInput, LinkTestResultSchema } from '../shared/contracts/admin-settings.ts'
import { BridgeErrorSchema, MetadataRequestSchema, MetadataResponseSchema } from '../shared/contracts/metadata-record.ts'
import { FolderStatesRequestSchema, FolderStatesResponseSchema } from '../shared/contracts/folder-states.ts'
import { TabConfigResponseSchema } from '../shared/contracts/tab-config.ts'
import { buildOpenApi, type Operation } from '../shared/openapi.ts'
import { SESSION_COOKIE } from './auth/session-auth.ts'
import { ADMIN_SETTINGS_ROUTE, TEST_LINK_ROUTE } from './routes/admin-settings.ts'
import { FILE_METADATA_ROUTE } from './routes/file-metadata.ts'
import { FOLDER_STATES_ROUTE } from './routes/folder-states.ts'
import { TAB_CONFIG_ROUTE } from './routes/tab-config.ts'

export const OPENAPI_ROUTE = '/ocs/v2.php/apps/gateway/openapi.json'

const ocsHeader = { name: 'OCS-APIRequest', description: 'Must be "true" (Nextcloud\'s CSRF rule for API clients); without it: 412' }
const ifNoneMatch = {
  name: 'If-None-Match',
  description: "The ETag of this request's previous answer: 304 while it still holds",
  optional: true,
}
const security = ['basic', 'session']
const failure = (description: string) => ({ description, schema: BridgeErrorSchema })
const common = {
  401: failure('No or wrong credentials (WWW-Authenticate: Basic)'),
  412: { description: 'CSRF check failed: no OCS-APIRequest header and no valid session request token' },
  429: failure('Too many failed logins from this user or address (Retry-After)'),
}

const operations: Operation[] = [
  {
    method: 'post',
    path: FILE_METADATA_ROUTE,
    security,
    headers: [ocsHeader],
    summary: "Storage record of a file or folder in the user's files tree",
    description:
      'filePath is the path below /remote.php/dav/files/<user>. A folder aggregates everything below it. The answer is bare, not wrapped in the OCS envelope.',
    body: MetadataRequestSchema,
    responses: {
      200: { description: 'The record', schema: MetadataResponseSchema },
      400: failure('Missing, malformed or hostile filePath, unknown fields, not JSON, not valid UTF-8, a header naming the user'),
      ...common,
      404: failure('No such file or folder for this user'),
      413: failure('Body over 1 MiB'),
      415: failure('Compressed body (Content-Encoding) or a charset other than UTF-8'),
      502: failure('Gateway unreachable or its answer is broken'),
      504: failure('Gateway did not answer in time'),
    },
  },
  {
    method: 'post',
    path: FOLDER_STATES_ROUTE,
    security,
    headers: [ocsHeader, ifNoneMatch],
    summary: "State of each entry of a folder, for the Files list's badges: one request per listing",
    description:
      "folderPath is a folder in the user's files tree. Entries the gateway does not know are absent; a gateway without folder states gives none. With names, only those entries (the rows on screen). The answer carries an ETag; this POST is a read, so a request with If-None-Match naming it gets 304 while nothing it shows has changed. At most 2 of one user's requests are worked on at a time, others wait their turn.",
    body: FolderStatesRequestSchema,
    responses: {
      200: { description: "The folder's entries (ETag header)", schema: FolderStatesResponseSchema },
      304: { description: 'Unchanged since the answer whose ETag If-None-Match names; no body' },
      400: failure("Missing, malformed or hostile folderPath, unknown fields, not JSON, a file's path"),
      ...common,
      413: failure('Body over 64 KiB'),
      415: failure('Compressed body (Content-Encoding) or a charset other than UTF-8'),
      429: failure("Too many failed logins, or more of this user's folder-states requests waiting than it may have (Retry-After)"),
      502: failure('Gateway unreachable or its answer is broken'),
      504: failure('Gateway did not answer in time'),
    },
  },
  {
    method: 'get',
    path: TAB_CONFIG_ROUTE,
    security,
    headers: [ocsHeader],
    summary: 'Network and link settings the sidebar tab needs',
    responses: { 200: { description: 'Settings', schema: TabConfigResponseSchema }, ...common },
  },
  {
    method: 'get',
    path: ADMIN_SETTINGS_ROUTE,
    security,
    headers: [ocsHeader],
    summary: 'Gateway link settings (admins only; the password is never returned, only whether it is set)',
    responses: { 200: { description: 'Settings', schema: AdminSettingsResponseSchema }, ...common, 403: failure('Not an admin') },
  },
  {
    method: 'put',
    path: ADMIN_SETTINGS_ROUTE,
    security,
    headers: [ocsHeader],
    summary: 'Save the gateway link settings (admins only); they apply to the next request',
    body: LinkSettingsInput,
    responses: {
      200: { description: 'Saved settings', schema: AdminSettingsResponseSchema },
      400: failure('Invalid settings'),
      ...common,
      403: failure('Not an admin'),
    },
  },
  {
    method: 'post',
    path: TEST_LINK_ROUTE,
    security,
    headers: [ocsHeader],
    summary: 'Try the saved settings, or these over them, against the gateway (admins only)',
    body: LinkTestInput,
    responses: {
      200: { description: 'What the gateway answered', schema: LinkTestResultSchema },
      400: failure('Invalid settings'),
      ...common,
      403: failure('Not an admin'),
    },
  },
]

/** The app surface's own API (the OCS routes), generated from the zod schemas the routes validate with. */
export function bridgeOpenApi(version: string): Record<string, unknown> {
  return buildOpenApi({
    title: 'Filecoin gateway app (Nextcloud OCS routes)',
    version,
    description: 'WebDAV (/remote.php/dav/files/<user>/), status.php and cloud capabilities follow Nextcloud and are not described here.',
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: 'User password or app password' },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: SESSION_COOKIE,
        description: 'Preview page session; send its requesttoken header too',
      },
    },
    operations,
  })
}
