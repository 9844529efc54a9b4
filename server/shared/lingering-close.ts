import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'

/** How long a closing connection goes on reading what the client still sends before it is cut. */
const LINGER_MS = 2_000

/** Sockets in their lingering close: what they still send is dropped, whatever the parser makes of it. */
const closing = new WeakSet<Socket | Duplex>()

export const isClosing = (socket: Socket | Duplex): boolean => closing.has(socket)

/**
 * Apache's lingering close. Closing a socket while the client's data sits
 * unread makes the kernel answer with a reset, and the client loses the
 * answer it was sent (a 401 challenge, a 413). So send FIN after the answer,
 * read and drop what still comes, and close once the client has stopped or
 * after `lingerMs`.
 */
export function closeGently(socket: Socket | Duplex, lastWords?: string, lingerMs = LINGER_MS): void {
  if (socket.destroyed || closing.has(socket)) return
  closing.add(socket)
  if (lastWords === undefined) socket.end()
  else socket.end(lastWords)
  socket.resume()
  const cut = setTimeout(() => socket.destroy(), lingerMs).unref()
  socket.once('close', () => clearTimeout(cut))
  socket.once('end', () => socket.destroy())
}

/** A whole HTTP/1.1 answer that closes the connection, for writing straight to a socket. */
export function rawAnswer(status: string, body: { type: string; text: string }, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')
  return `HTTP/1.1 ${status}\r\nContent-Type: ${body.type}\r\nContent-Length: ${Buffer.byteLength(body.text)}\r\n${extra}Connection: close\r\n\r\n${body.text}`
}
