// Drawn for this app on a 24×24 grid, single path each, so NcIconSvgWrapper can tint them.

/** A stack of three discs: data kept in storage. */
export const storagePath =
  'M12 2C7 2 4 3.6 4 5.5v13C4 20.4 7 22 12 22s8-1.6 8-3.5v-13C20 3.6 17 2 12 2zm0 2c3.9 0 6 1.1 6 1.5S15.9 7 12 7 6 5.9 6 5.5 8.1 4 12 4zM6 8.2C7.5 8.7 9.6 9 12 9s4.5-.3 6-.8V12c0 .4-2.1 1.5-6 1.5S6 12.4 6 12V8.2zm0 6.5c1.5.5 3.6.8 6 .8s4.5-.3 6-.8v3.8c0 .4-2.1 1.5-6 1.5s-6-1.1-6-1.5v-3.8z'

export const storageSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="${storagePath}"/></svg>`

/** Two overlapping sheets: copy. */
export const copyPath =
  'M9 2h10a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2h-2v-2h2V4H9v1H7V4a2 2 0 0 1 2-2zM5 7h10a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V9a2 2 0 0 1 2-2zm0 2v11h10V9H5z'

/** A circular arrow: reload. */
export const refreshPath = 'M12 4a8 8 0 0 1 7.4 5H22l-3.5 4L15 9h2.2A6 6 0 1 0 18 15h2.1A8 8 0 1 1 12 4z'

/** A check mark: done (shown on the copy button once it copied). */
export const checkPath = 'M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4L9 16.2z'
