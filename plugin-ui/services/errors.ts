import { isAxiosError, isCancel } from '@nextcloud/axios'
import { t } from '@nextcloud/l10n'

/** What went wrong, in terms the view can act on; tests check this, not the message. */
export type ApiErrorCode =
  | 'bad-request'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'csrf'
  | 'throttled'
  | 'gateway-unreachable'
  | 'gateway-timeout'
  | 'server-error'
  | 'network'
  | 'invalid-response'
  | 'aborted'

const CODES: Record<number, ApiErrorCode> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  412: 'csrf',
  429: 'throttled',
  502: 'gateway-unreachable',
  503: 'gateway-unreachable',
  504: 'gateway-timeout',
}

export class ApiError extends Error {
  readonly name = 'ApiError'
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message)
  }
}

/** The bridge's own words when it gave any: `{ error }`, or `{ message }` on Nextcloud's 412. */
function messageFrom(data: unknown): string | undefined {
  if (data && typeof data === 'object') {
    const { error, message } = data as { error?: unknown; message?: unknown }
    if (typeof error === 'string' && error) return error
    if (typeof message === 'string' && message) return message
  }
  return undefined
}

/** Turns whatever axios threw into an ApiError carrying the server's message. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (isCancel(err)) return new ApiError('aborted', t('gateway', 'The request was cancelled.'))
  if (isAxiosError(err)) {
    const status = err.response?.status
    if (status === undefined) {
      return new ApiError('network', t('gateway', 'The server could not be reached. Check your connection.'))
    }
    const code = CODES[status] ?? 'server-error'
    const message = messageFrom(err.response?.data) ?? t('gateway', 'The server answered with an error (HTTP {status}).', { status })
    return new ApiError(code, message, status)
  }
  return new ApiError('server-error', err instanceof Error ? err.message : String(err))
}

/** A 2xx with `success: false` still is a failure; keep the server's message. */
export function failedAnswer(data: unknown, status: number): ApiError {
  return new ApiError(CODES[status] ?? 'server-error', messageFrom(data) ?? t('gateway', 'The server reported a failure.'), status)
}

export function invalidAnswer(): ApiError {
  return new ApiError('invalid-response', t('gateway', 'The server sent an answer this app does not understand.'))
}
