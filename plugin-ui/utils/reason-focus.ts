/**
 * "Why is this not stored yet?" opens the tab on a file with its reason in
 * view: the file action asks here, the tab takes the request when it shows
 * that file's record.
 */
let asked: string | undefined

export function askReasonFocus(filePath: string): void {
  asked = filePath
}

/** True once, for the file the action asked about. */
export function takeReasonFocus(filePath: string): boolean {
  if (asked !== filePath) return false
  asked = undefined
  return true
}
