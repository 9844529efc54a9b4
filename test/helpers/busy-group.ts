/**
 * Small writes every 300 ms into the user's `/busy` folder keep the gateway's
 * current group writable on a stack with GROUP_IDLE_SECONDS=1: files uploaded
 * meanwhile stay staging until `stop()` lets the group go idle, and then go on
 * to deals at once.
 */
export async function keepGroupWritable(appUrl: string, auth: string, user = 'admin'): Promise<{ stop(): Promise<void> }> {
  const folder = `${appUrl}/remote.php/dav/files/${user}/busy`
  const made = await fetch(folder, { method: 'MKCOL', headers: { authorization: auth } })
  if (made.status !== 201) throw new Error(`MKCOL /busy answered ${made.status}`)
  let writing = true
  let n = 0
  const done = (async () => {
    while (writing) {
      await fetch(`${folder}/${n++}.txt`, { method: 'PUT', headers: { authorization: auth }, body: `keeps the group open ${n} `.repeat(8) })
      await new Promise((r) => setTimeout(r, 300))
    }
  })()
  return {
    async stop() {
      writing = false
      await done
    },
  }
}
