import axios, { AxiosError, type AxiosInstance } from 'axios'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { gatewayBadResponse, gatewayTimeout, gatewayUnreachable, notFound } from './errors.ts'
import { FileInfoFailureSchema, FileInfoSuccessSchema, type GatewayFile } from './gateway-record.ts'
import { encodePath } from './user-path.ts'

export interface GatewayClientOptions {
  url: string
  user?: string
  password?: string
  timeoutMs: number
}

/** The bridge's only way to the gateway: plain HTTP, one keep-alive pool. */
export interface GatewayClient {
  readonly url: URL
  readonly timeoutMs: number
  /** `Authorization` value for the gateway's service account, if any. */
  readonly authorization?: string
  /** Keep-alive agent shared with the WebDAV proxy. */
  readonly agent: HttpAgent
  /** `POST /file-info` with `verbose: true`; a missing file is a 404 BridgeError whatever way the gateway says it. */
  fileInfo(gatewayPath: string): Promise<GatewayFile>
  /** Creates a gateway folder and its parents (MKCOL), remembering those known to exist. */
  ensureFolder(gatewayPath: string): Promise<void>
  close(): void
}

// The real CIDgravity gateway answers 200 `{ success: false, error: "... not found ..." }`.
const NOT_FOUND_TEXT = /not\s*found|no such|does not exist/i
const MAX_ANSWER_BYTES = 32 * 1024 * 1024

export function createGatewayClient(opts: GatewayClientOptions): GatewayClient {
  const url = new URL(opts.url)
  const agentOptions = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }
  const agent = url.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions)
  const authorization = opts.user !== undefined && opts.password !== undefined
    ? 'Basic ' + Buffer.from(`${opts.user}:${opts.password}`).toString('base64')
    : undefined
  const http: AxiosInstance = axios.create({
    baseURL: url.href.replace(/\/+$/, ''),
    timeout: opts.timeoutMs,
    httpAgent: agent,
    httpsAgent: agent,
    headers: authorization ? { Authorization: authorization } : {},
    // We read status and body ourselves: any answer is data, not an exception.
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    maxContentLength: MAX_ANSWER_BYTES,
    maxRedirects: 0,
    // The gateway is a direct peer; reading *_PROXY variables on every call costs time for nothing.
    proxy: false,
    transitional: { clarifyTimeoutError: true, silentJSONParsing: true, forcedJSONParsing: false },
  })
  const knownFolders = new Set<string>()

  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run()
    } catch (err) {
      if (err instanceof AxiosError && (err.code === AxiosError.ETIMEDOUT || err.code === AxiosError.ECONNABORTED)) throw gatewayTimeout()
      throw gatewayUnreachable()
    }
  }

  return {
    url,
    timeoutMs: opts.timeoutMs,
    authorization,
    agent,
    async fileInfo(gatewayPath) {
      const res = await call(() => http.post('/file-info', { filePath: gatewayPath, verbose: true }))
      if (res.status === 401 || res.status === 403) throw gatewayBadResponse('The gateway refused the bridge\'s credentials')
      if (res.status === 404) throw notFound()
      let body: unknown
      try {
        body = JSON.parse(String(res.data))
      } catch {
        throw gatewayBadResponse(`The gateway answered ${res.status} with a body that is not JSON`)
      }
      const failure = FileInfoFailureSchema.safeParse(body)
      if (failure.success && NOT_FOUND_TEXT.test(failure.data.error ?? '')) throw notFound()
      if (res.status !== 200) throw gatewayBadResponse(`The gateway answered ${res.status}`)
      if (failure.success) throw gatewayBadResponse(`The gateway reported a failure: ${failure.data.error ?? 'no reason given'}`)
      const ok = FileInfoSuccessSchema.safeParse(body)
      if (!ok.success) throw gatewayBadResponse('The gateway\'s file record has an unexpected shape')
      return ok.data.result.file
    },
    async ensureFolder(gatewayPath) {
      if (gatewayPath === '/' || knownFolders.has(gatewayPath)) return
      const segments = gatewayPath.split('/').filter(Boolean)
      for (let i = 1; i <= segments.length; i++) {
        const folder = '/' + segments.slice(0, i).join('/')
        if (knownFolders.has(folder)) continue
        const res = await call(() => http.request({ method: 'MKCOL', url: encodePath(folder) }))
        // 201 made it; 405 means it is already there.
        if (res.status !== 201 && res.status !== 405) {
          throw gatewayBadResponse(`The gateway refused to create the folder for this user (${res.status})`)
        }
        knownFolders.add(folder)
      }
    },
    close: () => agent.destroy(),
  }
}
