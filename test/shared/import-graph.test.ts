import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { beforeAll, describe, expect, it } from 'vitest'

/**
 * No module may reach itself through its imports, type-only ones included:
 * a cycle means two parts that cannot be read (or tested) one without the
 * other, and at run time it can hand a module another's exports before they
 * exist. Every import form counts: static, `import type`, `export … from`,
 * `import()` calls and `import('…')` types.
 *
 * And server/ keeps its layers: the parts (bridge, gateway, service) meet
 * only through the network adapters and server/shared; the simulated
 * network stands apart, importing nothing of the adapters it stands in for,
 * and only the composition (server/compose) loads it.
 */

const ROOT = resolve(import.meta.dirname, '../..')
const FOLDERS = ['server', 'plugin-ui', 'scripts', 'test']

/** The module paths a file names, as written, parsed by TypeScript (so comments and strings never count). */
function specifiersOf(text: string): string[] {
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const out: string[] = []
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text)
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      out.push(node.moduleReference.expression.text)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push(node.arguments[0].text)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push(node.argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** A .vue file's code is in its `<script>` blocks (a component may have two: `setup` and a plain one). */
const scriptOf = (file: string, text: string) =>
  file.endsWith('.vue') ? [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]).join('\n') : text

/** Every .ts and .vue file under the folders, and the files among them each one imports (relative imports only). */
function importGraph(root: string, folders: string[]): Map<string, string[]> {
  const files = folders.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|vue)$/.test(f) && !f.split(/[\\/]/).includes('node_modules'))
      .map((f) => join(folder, f)),
  )
  const known = new Set(files)
  return new Map(
    files.map((file) => {
      const targets = specifiersOf(scriptOf(file, readFileSync(join(root, file), 'utf8')))
        .filter((s) => s.startsWith('.'))
        .map((s) => relative(root, resolve(root, dirname(file), s)))
      return [file, [...new Set(targets.filter((t) => known.has(t)))]]
    }),
  )
}

/** The graph's cycles: each strongly connected component of more than one file (or a file importing itself), sorted. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm: one depth-first walk, each node's lowest reachable index on the stack marks a component's root.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const walk = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        walk(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || graph.get(v)!.includes(v)) found.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) walk(v)
  return found.sort((a, b) => a[0].localeCompare(b[0]))
}

/** A path relative to the root with '/' between its segments, as the rules and the messages write it. */
const posix = (path: string) => path.split(/[\\/]/).join('/')

/** Whether `file` is `folder` or lies under it (whole segments: `server/net` is not under `server/network`). */
function isUnder(file: string, folder: string): boolean {
  const segments = posix(file).split('/')
  return folder.split('/').every((segment, i) => segments[i] === segment)
}

/**
 * A layer rule: no file under one of `from` (and under none of `exceptFrom`)
 * imports a file under one of `to` (and under none of `exceptTo`). Folders
 * are written relative to the root with '/'.
 */
interface LayerRule {
  from: string[]
  exceptFrom?: string[]
  to: string[]
  exceptTo?: string[]
}

/** The arrows of `graph` that break `rule`, as `file → target`, sorted. */
function offendingArrows(graph: Map<string, string[]>, rule: LayerRule): string[] {
  const within = (file: string, folders: readonly string[] = []) => folders.some((folder) => isUnder(file, folder))
  return [...graph]
    .filter(([file]) => within(file, rule.from) && !within(file, rule.exceptFrom))
    .flatMap(([file, targets]) =>
      targets
        .filter((target) => within(target, rule.to) && !within(target, rule.exceptTo))
        .map((target) => `${posix(file)} → ${posix(target)}`),
    )
    .sort()
}

/** The parts that each run alone behind HTTP; they meet only through the network adapters and what is shared. */
const PARTS = ['server/bridge', 'server/gateway', 'server/service']

describe('import graph', () => {
  it('finds every import form, and none in comments or strings', () => {
    const text = [
      `import { a } from './a.ts'`,
      `import type { B } from './b.ts'`,
      `import './c.ts'`,
      `export { d } from './d.ts'`,
      `export type * from './e.ts'`,
      `const f = await import('./f.ts')`,
      `type G = typeof import('./g.ts')`,
      `import H = require('./h.ts')`,
      `// import { x } from './comment.ts'`,
      `/* export * from './block-comment.ts' */`,
      `const s = "import { y } from './string.ts'"`,
      `import { z } from 'zod'`,
    ].join('\n')
    expect(specifiersOf(text)).toEqual(['./a.ts', './b.ts', './c.ts', './d.ts', './e.ts', './f.ts', './g.ts', './h.ts', 'zod'])
  })

  it('names the files of each cycle, and nothing outside them', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'x.ts']],
      ['c.ts', ['a.ts']],
      ['x.ts', ['y.ts']],
      ['y.ts', []],
      ['self.ts', ['self.ts']],
    ])
    expect(cyclesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['self.ts']])
  })

  it('lists the arrows that break a layer rule, by whole folders and with its exceptions', () => {
    const graph = new Map([
      ['server/network/lotus/index.ts', ['server/shared/chain.ts', 'server/simulation/simnet/index.ts']],
      ['server/network-extra/x.ts', ['server/simulation/simnet/index.ts']],
      ['server/simulation/simnet/index.ts', ['server/shared/chain.ts', 'server/simulation/simnet/random.ts', 'server/network/types.ts']],
      ['server/simulation/simnet/random.ts', []],
      ['server/compose/service.ts', ['server/simulation/simnet/index.ts', 'server/network/lotus/index.ts']],
      ['server/gateway/deals/engine.ts', ['server/service/index.ts', 'server/network/types.ts']],
      ['server/shared/chain.ts', []],
      ['server/network/types.ts', ['server/shared/chain.ts']],
      ['server/service/index.ts', []],
    ])
    // Adapters never import the simulation: `server/network-extra` is not under `server/network`.
    expect(offendingArrows(graph, { from: ['server/network'], to: ['server/simulation'] })).toEqual([
      'server/network/lotus/index.ts → server/simulation/simnet/index.ts',
    ])
    // The simulation imports only itself and shared code.
    const simulationRule = { from: ['server/simulation'], to: ['server'], exceptTo: ['server/simulation', 'server/shared'] }
    expect(offendingArrows(graph, simulationRule)).toEqual(['server/simulation/simnet/index.ts → server/network/types.ts'])
    // Only the composition imports the simulation.
    expect(
      offendingArrows(graph, { from: ['server'], exceptFrom: ['server/simulation', 'server/compose'], to: ['server/simulation'] }),
    ).toEqual([
      'server/network-extra/x.ts → server/simulation/simnet/index.ts',
      'server/network/lotus/index.ts → server/simulation/simnet/index.ts',
    ])
    // The parts meet only through the adapters and shared code.
    const partsRule = { from: ['server/gateway'], to: ['server'], exceptTo: ['server/gateway', 'server/network', 'server/shared'] }
    expect(offendingArrows(graph, partsRule)).toEqual(['server/gateway/deals/engine.ts → server/service/index.ts'])
  })

  it('has no cycle in server/, plugin-ui/, scripts/ or test/', () => {
    const graph = importGraph(ROOT, FOLDERS)
    // Sanity: the walk saw the code (a broken walk would find no cycle either).
    expect(graph.size).toBeGreaterThan(100)
    expect(graph.get(join('server', 'main.ts'))?.length).toBeGreaterThan(0)
    const cycles = cyclesOf(graph)
    expect(cycles, `files that import one another in a circle:\n${cycles.map((c) => `  ${c.join(', ')}`).join('\n')}`).toEqual([])
  })

  it('keeps the tools off the tests: scripts/ never imports test/ (what both use is in scripts/lib/), and the product imports neither', () => {
    const graph = importGraph(ROOT, FOLDERS)
    const crossing = [...graph]
      .flatMap(([file, targets]) => targets.map((target) => [file, target]))
      .filter(([file, target]) => {
        const [from, to] = [file.split(/[\\/]/)[0], target.split(/[\\/]/)[0]]
        return (from === 'scripts' && to === 'test') || ((from === 'server' || from === 'plugin-ui') && ['scripts', 'test'].includes(to))
      })
      .map(([file, target]) => `${file} → ${target}`)
    expect(crossing).toEqual([])
  })

  describe('layers of server/ (DESIGN.md, "Layout")', () => {
    let graph: Map<string, string[]>
    beforeAll(() => {
      graph = importGraph(ROOT, FOLDERS)
    })

    it('walks every folder the rules name (a misspelt one would pass them all)', () => {
      for (const folder of ['server/network', 'server/simulation', 'server/compose', 'server/shared', ...PARTS]) {
        expect([...graph.keys()].filter((file) => isUnder(file, folder)).length, folder).toBeGreaterThan(3)
      }
    })

    it('keeps the adapters (server/network) off the simulation (server/simulation)', () => {
      expect(offendingArrows(graph, { from: ['server/network'], to: ['server/simulation'] })).toEqual([])
    })

    it('keeps the simulation to itself and server/shared: no adapter, part or composition code in it', () => {
      const rule = { from: ['server/simulation'], to: FOLDERS, exceptTo: ['server/simulation', 'server/shared'] }
      expect(offendingArrows(graph, rule)).toEqual([])
    })

    it('lets only server/compose import the simulation (tests and scripts aside): no part or adapter depends on it', () => {
      const rule = { from: ['server', 'plugin-ui'], exceptFrom: ['server/simulation', 'server/compose'], to: ['server/simulation'] }
      expect(offendingArrows(graph, rule)).toEqual([])
    })

    it.each(PARTS)('keeps %s off the other parts: besides itself, it imports only server/network and server/shared', (part) => {
      const rule = { from: [part], to: FOLDERS, exceptTo: [part, 'server/network', 'server/shared'] }
      expect(offendingArrows(graph, rule)).toEqual([])
    })

    it('keeps server/shared to itself', () => {
      expect(offendingArrows(graph, { from: ['server/shared'], to: FOLDERS, exceptTo: ['server/shared'] })).toEqual([])
    })
  })
})
