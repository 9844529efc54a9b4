// @vitest-environment happy-dom
import { flushPromises, mount, type DOMWrapper, type VueWrapper } from '@vue/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import AdminSettings from '../../plugin-ui/views/AdminSettings.vue'
import { validateMounts, type MountRow } from '../../plugin-ui/utils/validate-settings.ts'
import { ADMIN_SETTINGS, CONFIG, http, TEST_LINK } from './http-mock.ts'

vi.mock('@nextcloud/axios', () => import('./http-mock.ts').then((m) => m.axiosModule))

const savedMounts = [
  { mountPoint: '/Filecoin', gatewayPath: '/{user}' },
  { mountPoint: '/Team', gatewayPath: '/shared' },
]

const saved = {
  gatewayUrl: '',
  gatewayUser: 'bridge',
  gatewayPasswordSet: true,
  pathMap: '/{user}',
  network: 'mainnet',
  ipfsGateway: 'https://ipfs.io',
  mounts: savedMounts,
}

let wrapper: VueWrapper | undefined

async function open(): Promise<VueWrapper> {
  wrapper = mount(AdminSettings, { attachTo: document.body })
  await flushPromises()
  return wrapper
}

const rows = (w: VueWrapper) => w.findAll('[data-test="mount-row"]')
const field = (row: DOMWrapper<Element>, name: 'mountPoint' | 'gatewayPath') =>
  row.get(`[data-test="${name}"] input, input[data-test="${name}"]`)
const shown = (w: VueWrapper) =>
  rows(w).map((row) => ({
    mountPoint: (field(row, 'mountPoint').element as HTMLInputElement).value,
    gatewayPath: (field(row, 'gatewayPath').element as HTMLInputElement).value,
  }))

async function submit(w: VueWrapper) {
  await w.get('[data-test="form"]').trigger('submit')
  await flushPromises()
}

/** The bridge echoes what it stored, as the real one does. */
function acceptPut() {
  http.on('PUT', ADMIN_SETTINGS, (req) => ({
    status: 200,
    data: { success: true, settings: { ...saved, ...(req.data as object), gatewayPasswordSet: true } },
  }))
}

const putMounts = () => (http.callsTo('PUT', ADMIN_SETTINGS)[0]?.data as { mounts?: unknown } | undefined)?.mounts

beforeEach(() => {
  ;(window as unknown as { _oc_webroot: string })._oc_webroot = ''
  http.reset()
  http.on('GET', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: saved } })
  // The link test the page runs as it opens.
  http.on('POST', TEST_LINK, { status: 200, data: { success: true, status: 404, message: 'ok', latencyMs: 1 } })
  http.on('GET', CONFIG, { status: 200, data: { success: true, config: { network: 'calibration', ipfsGateway: 'https://ipfs.io' } } })
})

afterEach(() => {
  wrapper?.unmount()
  wrapper = undefined
  document.body.innerHTML = ''
  http.assertNoUnexpected()
})

describe('AdminSettings: External Storage mounts', () => {
  it('shows the saved mounts, each with labelled fields', async () => {
    const w = await open()
    expect(shown(w)).toEqual(savedMounts)
    expect(w.find('[data-test="mounts-empty"]').exists()).toBe(false)
    const input = field(rows(w)[0], 'mountPoint').element as HTMLInputElement
    // Screen readers announce the field by its label.
    expect(document.querySelector(`label[for="${input.id}"]`)?.textContent).toContain('Mount point')
    expect(rows(w)[1].get('[data-test="remove-mount"]').attributes('aria-label')).toBe('Remove mount 2')
  })

  it('says the path mapping applies when no mounts are saved', async () => {
    http.on('GET', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: { ...saved, mounts: [] } } })
    const w = await open()
    expect(rows(w)).toHaveLength(0)
    expect(w.find('[data-test="mounts-empty"]').exists()).toBe(true)
  })

  it('adds a row, focused for typing, and saves it after the saved ones', async () => {
    acceptPut()
    const w = await open()
    await w.get('[data-test="add-mount"]').trigger('click')
    await flushPromises()
    expect(rows(w)).toHaveLength(3)
    const added = rows(w)[2]
    expect(document.activeElement).toBe(field(added, 'mountPoint').element)
    await field(added, 'mountPoint').setValue('/Archive')
    await field(added, 'gatewayPath').setValue('/archive/{user}')
    await submit(w)
    expect(putMounts()).toEqual([...savedMounts, { mountPoint: '/Archive', gatewayPath: '/archive/{user}' }])
    expect(w.find('[data-test="saved"]').exists()).toBe(true)
    expect(shown(w)).toEqual([...savedMounts, { mountPoint: '/Archive', gatewayPath: '/archive/{user}' }])
  })

  it('removes a row and keeps the others with what was typed in them', async () => {
    acceptPut()
    const w = await open()
    await field(rows(w)[1], 'gatewayPath').setValue('/team')
    await rows(w)[0].get('[data-test="remove-mount"]').trigger('click')
    await flushPromises()
    expect(shown(w)).toEqual([{ mountPoint: '/Team', gatewayPath: '/team' }])
    await submit(w)
    expect(putMounts()).toEqual([{ mountPoint: '/Team', gatewayPath: '/team' }])
  })

  it('saves an empty list when every row is removed', async () => {
    acceptPut()
    const w = await open()
    await rows(w)[1].get('[data-test="remove-mount"]').trigger('click')
    await rows(w)[0].get('[data-test="remove-mount"]').trigger('click')
    await flushPromises()
    expect(document.activeElement).toBe(w.get('[data-test="add-mount"]').element)
    expect(w.find('[data-test="mounts-empty"]').exists()).toBe(true)
    await submit(w)
    expect(putMounts()).toEqual([])
  })

  it('sends the mounts exactly, trimmed and without a trailing slash on the mount point', async () => {
    acceptPut()
    const w = await open()
    await field(rows(w)[0], 'mountPoint').setValue(' /Filecoin/Photos/ ')
    await field(rows(w)[0], 'gatewayPath').setValue('/{user}/photos ')
    await submit(w)
    const [put] = http.callsTo('PUT', ADMIN_SETTINGS)
    expect(put.data).toEqual({
      gatewayUrl: '',
      gatewayUser: 'bridge',
      pathMap: '/{user}',
      network: 'mainnet',
      ipfsGateway: 'https://ipfs.io',
      mounts: [{ mountPoint: '/Filecoin/Photos', gatewayPath: '/{user}/photos' }, savedMounts[1]],
    })
  })

  it.each<[string, Partial<MountRow>, 'mountPoint' | 'gatewayPath']>([
    ['a relative mount point', { mountPoint: 'Filecoin' }, 'mountPoint'],
    ['the root as mount point', { mountPoint: '/' }, 'mountPoint'],
    ['a ".." mount point', { mountPoint: '/Filecoin/..' }, 'mountPoint'],
    ['a relative gateway path', { gatewayPath: 'shared' }, 'gatewayPath'],
    ['an unknown placeholder', { gatewayPath: '/{group}' }, 'gatewayPath'],
    ['a "//" gateway path', { gatewayPath: '/a//b' }, 'gatewayPath'],
  ])('refuses %s with a message on that field and does not save', async (_name, typed, bad) => {
    const w = await open()
    const row = rows(w)[0]
    if (typed.mountPoint !== undefined) await field(row, 'mountPoint').setValue(typed.mountPoint)
    if (typed.gatewayPath !== undefined) await field(row, 'gatewayPath').setValue(typed.gatewayPath)
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(0)
    const good = bad === 'mountPoint' ? 'gatewayPath' : 'mountPoint'
    const badInput = field(rows(w)[0], bad)
    expect(badInput.attributes('aria-invalid')).toBe('true')
    expect(field(rows(w)[0], good).attributes('aria-invalid')).not.toBe('true')
    expect(field(rows(w)[1], 'mountPoint').attributes('aria-invalid')).not.toBe('true')
    // The message is tied to the input, so a screen reader reads it with the field.
    const describedBy = badInput.attributes('aria-describedby') ?? ''
    const message = describedBy
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent?.trim())
      .filter(Boolean)
      .join(' ')
    expect(message.length).toBeGreaterThan(0)
  })

  it('refuses a mount point listed twice, on the later row', async () => {
    const w = await open()
    await field(rows(w)[1], 'mountPoint').setValue('/Filecoin/')
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(0)
    expect(field(rows(w)[0], 'mountPoint').attributes('aria-invalid')).not.toBe('true')
    expect(field(rows(w)[1], 'mountPoint').attributes('aria-invalid')).toBe('true')
  })

  it('refuses a new row left empty', async () => {
    const w = await open()
    await w.get('[data-test="add-mount"]').trigger('click')
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(0)
    expect(field(rows(w)[2], 'mountPoint').attributes('aria-invalid')).toBe('true')
    // An empty field says it is required, not that its (missing) value is malformed.
    expect(rows(w)[2].text()).toContain('Required: the folder users see, for example /Filecoin.')
    expect(field(rows(w)[2], 'mountPoint').attributes('required')).toBeDefined()
  })

  it('leaves mounts out of the save when the bridge predates them', async () => {
    const { mounts: _, ...withoutMounts } = saved
    http.on('GET', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: withoutMounts } })
    http.on('PUT', ADMIN_SETTINGS, { status: 200, data: { success: true, settings: withoutMounts } })
    const w = await open()
    await submit(w)
    expect(http.callsTo('PUT', ADMIN_SETTINGS)).toHaveLength(1)
    expect(putMounts()).toBeUndefined()
  })
})

describe('validateMounts', () => {
  it('accepts an empty list and the usual mounts', () => {
    expect(validateMounts([])).toEqual({ rows: [] })
    expect(validateMounts(savedMounts)).toEqual({ rows: [{}, {}] })
    expect(validateMounts([{ mountPoint: '/Filecoin/', gatewayPath: '/mounts/{user}/files' }])).toEqual({ rows: [{}] })
  })

  it.each<[MountRow, keyof MountRow]>([
    [{ mountPoint: '', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '//', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '/a//b', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '/a\\b', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '/a\tb', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '/./a', gatewayPath: '/{user}' }, 'mountPoint'],
    [{ mountPoint: '/Filecoin', gatewayPath: '' }, 'gatewayPath'],
    [{ mountPoint: '/Filecoin', gatewayPath: '/../x' }, 'gatewayPath'],
    [{ mountPoint: '/Filecoin', gatewayPath: '/{user' }, 'gatewayPath'],
  ])('flags %o on %s', (row, name) => {
    expect(Object.keys(validateMounts([row]).rows[0])).toEqual([name])
  })

  it('flags paths longer than the bridge accepts', () => {
    const long = `/${'a'.repeat(1024)}`
    expect(Object.keys(validateMounts([{ mountPoint: long, gatewayPath: '/{user}' }]).rows[0])).toEqual(['mountPoint'])
    expect(Object.keys(validateMounts([{ mountPoint: '/Filecoin', gatewayPath: long }]).rows[0])).toEqual(['gatewayPath'])
  })

  it('flags the second of two rows with the same mount point', () => {
    const { rows } = validateMounts([
      { mountPoint: '/Filecoin', gatewayPath: '/{user}' },
      { mountPoint: '/Filecoin/', gatewayPath: '/shared' },
    ])
    expect(rows[0]).toEqual({})
    expect(Object.keys(rows[1])).toEqual(['mountPoint'])
  })

  it('allows at most 50 mounts', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ mountPoint: `/m${i}`, gatewayPath: '/shared' }))
    expect(validateMounts(many(50)).list).toBeUndefined()
    expect(validateMounts(many(51)).list).toBeTruthy()
  })
})
