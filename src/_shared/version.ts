/** The one version of niceeval; kept equal to deno.json and npm/package.json by set_version.ts. */
export const VERSION = "0.1.0";
