import * as dagCbor from '@ipld/dag-cbor'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { cborCid } from './chain-wire.ts'
import type { ChainFailure } from './faults.ts'
import { LOTUS_ERROR } from './rpc-context.ts'

/**
 * The tokens the Lotus gateway's limiter takes for a call of the gateway API the simulated node serves
 * (lotus gateway/proxy_fil_v1.go): chainRateLimitTokens (2) for the Chain methods, stateRateLimitTokens
 * (3) for the others (State methods, gas estimates, the mpool's nonce and push).
 */
const rateLimitTokens = (method: string) => (method.startsWith('Filecoin.Chain') ? 2 : 3)

/** What a node missing the state asked about names: some block of it (here, always the same). */
const MISSING_BLOCK = cborCid(dagCbor.encode('simnet pruned state')).toString()

/** The page nginx answers with an error status of its own (nginx src/http/ngx_http_special_response.c). */
function nginxPage(status: number, reason: string): string {
  const title = `${status} ${reason}`
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`
}

const html = (res: ServerResponse, status: number, reason: string) => {
  res.writeHead(status, { 'content-type': 'text/html' }).end(nginxPage(status, reason))
}

/**
 * Answers a chain call a fault struck as a node under load, or the proxy before it, answers one; the
 * call is not made. `hangMs`: how long a `timeout` is held before the proxy gives up on it.
 */
export function answerFault(
  req: IncomingMessage,
  res: ServerResponse,
  call: { id: unknown; method: string },
  failure: ChainFailure,
  hangMs: number,
): void {
  const rpcError = (message: string) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, error: { code: LOTUS_ERROR, message } }))
  }
  switch (failure) {
    // lotus gateway/handler.go RateLimitHandler: a host past its connections per minute gets a 429, no body.
    case 'rate-limited':
      res.writeHead(429).end()
      return
    // lotus gateway/node.go limit: a call that would wait past the rate limit timeout for its tokens fails
    // "server busy. " + golang.org/x/time/rate's WaitN error, as go-jsonrpc sends any error: code 1, HTTP 200.
    case 'busy':
      return rpcError(`server busy. rate: Wait(n=${rateLimitTokens(call.method)}) would exceed context deadline`)
    // nginx's limit_req before a node refuses what passes its rate with limit_req_status, 503 by default.
    case 'unavailable':
      return html(res, 503, 'Service Temporarily Unavailable')
    // nginx's proxy_pass when the node behind it is down or restarting.
    case 'bad-gateway':
      return html(res, 502, 'Bad Gateway')
    // The node never answers; nginx gives up after proxy_read_timeout (60 s by default) with a 504, unless the
    // client gave up first.
    case 'timeout': {
      const timer = setTimeout(() => html(res, 504, 'Gateway Time-out'), hangMs)
      req.socket.once('close', () => clearTimeout(timer))
      return
    }
    // A node that cannot load the state it is asked about (a pruned or broken blockstore) fails with the
    // blockstore's error (go-ipld-format ErrNotFound: "ipld: could not find <cid>").
    case 'unknown':
      return rpcError(`ipld: could not find ${MISSING_BLOCK}`)
  }
}
