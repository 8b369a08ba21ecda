/** Defaults shared by the commands that read or write a Record. */

/** Default Record root, relative to the project. */
export const DEFAULT_RECORD_ROOT = ".niceeval/record";
