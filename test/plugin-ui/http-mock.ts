/**
 * Stand-in for @nextcloud/axios in the component tests. Routes are matched on
 * method + pathname; anything else is recorded as unexpected and rejected, and
 * `assertNoUnexpected()` (run after each test) turns it into a failure, so a
 * wrong URL can never pass quietly. Like the bridge, a request without the
 * OCS-APIRequest header is answered 412.
 */
import { AxiosError, CanceledError, isAxiosError, isCancel } from 'axios'

export interface RecordedRequest {
  method: string
  url: string
  path: string
  data: unknown
  headers: Record<string, string>
}

export interface MockResponse {
  status: number
  data: unknown
}

type Handler = (req: RecordedRequest) => MockResponse | Promise<MockResponse>

interface RequestConfig {
  headers?: Record<string, string>
  signal?: AbortSignal
}

export class HttpMock {
  #routes = new Map<string, Handler[]>()
  calls: RecordedRequest[] = []
  unexpected: string[] = []

  /**
   * Answers `method path` with the given responses in turn (the last one
   * repeats), or with a handler.
   */
  on(method: string, path: string, ...answers: Array<MockResponse | Handler>): this {
    const handlers = answers.map((a) => (typeof a === 'function' ? a : () => a))
    this.#routes.set(`${method.toUpperCase()} ${path}`, handlers)
    return this
  }

  callsTo(method: string, path: string): RecordedRequest[] {
    return this.calls.filter((c) => c.method === method.toUpperCase() && c.path === path)
  }

  reset(): void {
    this.#routes.clear()
    this.calls = []
    this.unexpected = []
  }

  assertNoUnexpected(): void {
    if (this.unexpected.length > 0) {
      throw new Error(`Unexpected HTTP requests: ${this.unexpected.join(', ')}`)
    }
  }

  async request(method: string, url: string, data: unknown, config: RequestConfig = {}): Promise<MockResponse> {
    const path = new URL(url, 'http://localhost').pathname
    const headers = { ...(config.headers ?? {}) }
    const req: RecordedRequest = { method, url, path, data, headers }
    const key = `${method} ${path}`
    const handlers = this.#routes.get(key)
    if (!handlers) {
      this.unexpected.push(key)
      throw new Error(`No mock for ${key}`)
    }
    const matched = this.calls.filter((c) => `${c.method} ${c.path}` === key).length
    this.calls.push(req)
    const response =
      headers['OCS-APIRequest'] === 'true'
        ? await handlers[Math.min(matched, handlers.length - 1)](req)
        : { status: 412, data: { message: 'CSRF check failed' } }
    if (config.signal?.aborted) throw new CanceledError()
    if (response.status >= 400) {
      throw new AxiosError(`Request failed with status code ${response.status}`, AxiosError.ERR_BAD_RESPONSE, undefined, req, {
        status: response.status,
        statusText: '',
        data: response.data,
        headers: {},
        config: {} as never,
      })
    }
    return response
  }

  readonly client = {
    get: (url: string, config?: RequestConfig) => this.request('GET', url, undefined, config),
    post: (url: string, data?: unknown, config?: RequestConfig) => this.request('POST', url, data, config),
    put: (url: string, data?: unknown, config?: RequestConfig) => this.request('PUT', url, data, config),
    delete: (url: string, config?: RequestConfig) => this.request('DELETE', url, undefined, config),
  }
}

export const http = new HttpMock()

/** The module that replaces @nextcloud/axios: `vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))`. */
export const axiosModule = { default: http.client, isAxiosError, isCancel }

export const METADATA = '/ocs/v2.php/apps/gateway/get-file-metadata'
export const CONFIG = '/ocs/v2.php/apps/gateway/config'
export const ADMIN_SETTINGS = '/ocs/v2.php/apps/gateway/admin/settings'
export const TEST_LINK = '/ocs/v2.php/apps/gateway/admin/test-link'
