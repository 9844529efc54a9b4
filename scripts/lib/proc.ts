import { readFileSync } from 'node:fs'

/** User and system CPU seconds a process has used so far (Linux /proc; fields 14 and 15, in clock ticks of 1/100 s). */
export function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces: count the fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
