/** Reader warnings shared by `exp`, `exp --dry` and `show`. */

/** The REC-10 reader warning, or undefined when every Run directory is published. */
export function unpublishedWarning(
  unpublished: readonly string[],
  recordRoot: string,
): string | undefined {
  if (unpublished.length === 0) return undefined;
  return `${unpublished.length} unpublished run(s) in ${recordRoot} ignored (in progress, or left by a killed process; niceeval clean removes leftovers)`;
}
