import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { loadConfig } from '../server/shared/config.ts'
import { openSql } from '../server/shared/sql/index.ts'
import { randomSecret } from '../server/shared/secrets.ts'
import { createUserStore, UserStoreError } from '../server/bridge/users.ts'

const HELP = `Usage: npm run users -- <command> [options]

Manages the app surface's embedded users in DATA_DIR/app/app.sqlite
(DATA_DIR defaults to ./data). Changes apply to a running server within 60 s.

Commands:
  list                               list users
  add <user> [--password PW] [--display-name NAME] [--admin]
                                     add a user
  passwd <user> [--password PW]      set a user's password
  delete <user>                      delete a user and their app passwords
  app-password <user> [--name NAME]  create an app password (shown once)
  app-passwords <user>               list a user's app passwords
  revoke <user> [--id N]             revoke one app password, or all of them

Passwords: --password, else typed at the prompt, else read from stdin;
with --generate (or an empty stdin) a random one is generated and printed.
`

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

async function readLine(prompt: string, hidden: boolean): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY })
  if (hidden && process.stdin.isTTY) {
    // Echo nothing while typing a password.
    ;(rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.includes(prompt)) process.stderr.write(prompt)
    }
  }
  return new Promise((resolve) => {
    let answered = false
    // Piped input needs no prompt.
    rl.question(process.stdin.isTTY ? prompt : '', (answer) => {
      answered = true
      rl.close()
      if (hidden && process.stdin.isTTY) process.stderr.write('\n')
      resolve(answer)
    })
    rl.on('close', () => {
      if (!answered) resolve('')
    })
  })
}

async function choosePassword(given: string | undefined, generate: boolean): Promise<{ password: string; generated: boolean }> {
  if (given !== undefined) return { password: given, generated: false }
  if (!generate) {
    const typed = (await readLine('Password: ', true)).trim()
    if (typed) return { password: typed, generated: false }
    if (process.stdin.isTTY) fail('No password given')
  }
  return { password: randomSecret(18), generated: true }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      password: { type: 'string' },
      generate: { type: 'boolean' },
      'display-name': { type: 'string' },
      admin: { type: 'boolean' },
      name: { type: 'string' },
      id: { type: 'string' },
    },
  })
  const [command, userId] = positionals
  if (values.help || !command) {
    process.stdout.write(HELP)
    return
  }
  const needsUser = command !== 'list'
  if (needsUser && !userId) fail(`"${command}" needs a user name\n\n${HELP}`, 2)

  const config = loadConfig()
  const sql = await openSql({ databaseUrl: config.bridge.databaseUrl, file: join(config.bridge.dataDir, 'app.sqlite'), schema: 'bridge' })
  const users = await createUserStore(sql)
  try {
    switch (command) {
      case 'list':
        for (const u of await users.list()) {
          process.stdout.write(`${u.id}\t${u.displayName}${u.isAdmin ? '\tadmin' : ''}\n`)
        }
        break
      case 'add': {
        const { password, generated } = await choosePassword(values.password, values.generate ?? false)
        await users.add({ id: userId, password, displayName: values['display-name'], isAdmin: values.admin })
        process.stdout.write(`Added user ${userId}${generated ? ` with password ${password}` : ''}\n`)
        break
      }
      case 'passwd': {
        const { password, generated } = await choosePassword(values.password, values.generate ?? false)
        await users.setPassword(userId, password)
        process.stdout.write(`Password of ${userId} changed${generated ? ` to ${password}` : ''}\n`)
        break
      }
      case 'delete':
        await users.remove(userId)
        process.stdout.write(`Deleted user ${userId}\n`)
        break
      case 'app-password': {
        const { token, info } = await users.createAppPassword(userId, values.name ?? 'app password')
        process.stdout.write(`App password #${info.id} "${info.name}" for ${userId} (shown only now):\n${token}\n`)
        break
      }
      case 'app-passwords':
        for (const a of await users.listAppPasswords(userId)) {
          process.stdout.write(`${a.id}\t${a.name}\t${new Date(a.createdMs).toISOString()}\n`)
        }
        break
      case 'revoke': {
        const id = values.id === undefined ? undefined : Number(values.id)
        if (id !== undefined && !Number.isInteger(id)) fail('--id must be a number', 2)
        const n = await users.revokeAppPasswords(userId, id)
        process.stdout.write(`Revoked ${n} app password(s) of ${userId}\n`)
        break
      }
      default:
        fail(`Unknown command "${command}"\n\n${HELP}`, 2)
    }
  } catch (err) {
    if (err instanceof UserStoreError) fail(err.message)
    throw err
  } finally {
    await sql.close()
  }
}

main().catch((err) => fail(err?.code?.startsWith?.('ERR_PARSE_ARGS') ? `${err.message}\n\n${HELP}` : `Failed: ${err?.message ?? err}`, 2))
