/**
 * @module
 * niceeval: an evaluation runner for AI agents. This entry exports the authoring API
 * (`defineConfig`, `defineExperiment`, `defineEval`, …) and, run as the main module, the CLI.
 *
 * @example
 * ```ts
 * import { defineConfig } from "niceeval";
 * export default defineConfig({ maxConcurrency: 4 });
 * ```
 */
export * from "./src/public/root.ts";

if (import.meta.main) {
  // Deliberately not awaited: user files import this very module, and a pending top-level await
  // here would keep their imports waiting forever. `runProcess` ends the process itself. The
  // public namespaces are imported only when a command runs, so that `--version` and `--help`
  // load almost nothing beyond this module (docs/start.md).
  import("./src/cli/process.ts").then(({ runProcess }) =>
    runProcess({
      api: () =>
        Promise.all([
          import("./src/public/root.ts"),
          import("./src/public/expect.ts"),
          import("./src/public/adapter.ts"),
          import("./src/public/sandbox.ts"),
        ]).then(([root, expect, adapter, sandbox]) => ({ root, expect, adapter, sandbox })),
      apiUrls: {
        "niceeval": import.meta.url,
        "niceeval/expect": new URL("./src/public/expect.ts", import.meta.url).href,
        "niceeval/adapter": new URL("./src/public/adapter.ts", import.meta.url).href,
        "niceeval/sandbox": new URL("./src/public/sandbox.ts", import.meta.url).href,
      },
    })
  );
}
