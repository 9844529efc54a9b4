/**
 * The README's walk-through as a newcomer pastes it. A ```sh block right after
 * the marker comment is a step; a ```json block right after that step is what
 * it prints. The marker is an HTML comment, so the rendered README reads as
 * before and whoever edits a marked block sees that a test runs it.
 */
export const README_MARKER = '<!-- checked by test/e2e/readme.test.ts -->'

/** Where the README's commands expect the app surface (`npm start`'s default port). */
export const README_APP_URL = 'http://127.0.0.1:8080'

export interface ReadmeStep {
  /** The `##` heading the step is under. */
  section: string
  commands: string
  /** The ```json block shown as its output, if any. */
  output?: string
}

const STEP = new RegExp(`${README_MARKER}\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`(?:\\s*\`\`\`json\\n([\\s\\S]*?)\`\`\`)?`, 'g')

export function readmeSteps(markdown: string): ReadmeStep[] {
  const steps: ReadmeStep[] = []
  for (const match of markdown.matchAll(STEP)) {
    const before = markdown.slice(0, match.index)
    const section = [...before.matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? ''
    steps.push({ section, commands: match[1], output: match[2] })
  }
  return steps
}

/**
 * The variables of a step that is `VAR=value … npm start` (line continuations
 * allowed), or undefined for any other step.
 * @example startEnv('ADMIN_PASSWORD=demo-password npm start') // { ADMIN_PASSWORD: 'demo-password' }
 */
export function startEnv(commands: string): Record<string, string> | undefined {
  const words = commands.replace(/\\\n/g, ' ').trim().split(/\s+/)
  if (words.slice(-2).join(' ') !== 'npm start') return undefined
  const assignments = words.slice(0, -2).map((word) => /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word))
  if (assignments.some((a) => !a)) throw new Error(`not plain VAR=value assignments before npm start: ${commands}`)
  return Object.fromEntries(assignments.map((a) => [a![1], a![2]]))
}

/** The commands aimed at a stack listening elsewhere than the README's port. */
export const aimedAt = (commands: string, appUrl: string) => commands.replaceAll(README_APP_URL, appUrl)

/**
 * A step ending in `watch -n N '<command>'`, split into what runs once and the
 * command watch repeats (a test polls that itself).
 */
export function splitWatch(commands: string): { once: string; watched?: string } {
  const match = /^watch -n \S+ '([^']*)'\s*$/m.exec(commands)
  return match ? { once: commands.slice(0, match.index), watched: match[1] } : { once: commands }
}

/** The text under a `##` heading, up to the next one. */
export function sectionText(markdown: string, section: string): string {
  const start = markdown.indexOf(`\n## ${section}\n`)
  if (start < 0) throw new Error(`README has no section "${section}"`)
  const end = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start, end < 0 ? undefined : end)
}
